// `minimax validate`: a second, independent check of a converted checkpoint against its MXFP4
// source, with its own safetensors reading (validate_reader.h) and its own decoders
// (validate_decode.h): every routed-expert scale a normal power of two, every compared expert
// element equal to its MXFP4 source element and inside the target's e4m3 window, no -0 or NaN
// codes, BF16 weights equal to their MXFP4 source, everything else byte-identical, side files
// identical, no file or tensor the index does not account for, the config complete and
// consistent with the tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace minimax {

class CheckedCheckpoint;

struct ValidateOptions {
  std::string source_dir;
  std::string converted_dir;
  int sample = 0;      // routed experts compared element by element per layer; 0 = every one
  size_t threads = 0;  // 0 = one per hardware thread
  bool show_progress = false;  // a bar on stderr over the converted bytes checked
};

struct ValidateReport {
  static constexpr size_t kMaxListed = 50;

  std::string target;  // "ocp" or "gaudi2", from the converted config
  size_t expert_weights = 0, expert_weights_compared = 0, scale_rows = 0;
  size_t bf16_weights = 0, identical_tensors = 0, side_files = 0;
  uint64_t elements_compared = 0, bytes_compared = 0;
  size_t failure_count = 0;
  std::vector<std::string> failures;  // the first kMaxListed

  bool ok() const { return failure_count == 0; }
  void fail(std::string message);
  void merge(const ValidateReport& other);
};

ValidateReport validate_conversion(const ValidateOptions& options);
std::string format_validate_report(const ValidateReport& report);

// The e4m3 exponent window a target's elements must lie in: ocp [-5, 8], gaudi2 [-6, 7]
// (the converter's contract, restated here independently).
struct ValidationWindow {
  int min_exponent, max_exponent;
};

// Checks the converted config.json against the source's (identical apart from
// quantization_config) and against the converted tensors (every FP8 Linear targeted and not
// ignored, every other Linear ignored). Sets report.target from fp8_dtype_flavor.
void check_converted_config(const nlohmann::json& source_config, const CheckedCheckpoint& converted,
                            ValidateReport& report);
ValidationWindow validation_window(const std::string& target);

// Accounts for every file of the converted directory: a .safetensors file must be a shard the
// reader read (one the index lists, or model.safetensors without an index); any other file must
// be config.json, the index, or a file of the same name in the source, whose side files must all
// be there unchanged. Anything else (a foreign shard, a stray note, a directory) is a failure.
void check_checkpoint_files(const std::string& source_dir, const CheckedCheckpoint& converted,
                            ValidateReport& report);

}  // namespace minimax
