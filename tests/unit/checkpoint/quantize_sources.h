// The tiny M3 source checkpoints of the quantize tests, in every layout, made once per process
// (BF16 in 3 shards, the others quantized from it), and byte helpers for comparing tensors.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "base/atomic_output.h"
#include "checkpoint/model_config.h"
#include "checkpoint/quantize.h"
#include "checkpoint/tiny_checkpoint.h"
#include "checkpoint/tiny_config.h"
#include "formats/tensor_store.h"
#include "scratch_dir.h"

namespace minimax::quantize_test {

inline const char* kPrefix = "minimax_quantize";

inline const std::string& source_dir(QuantScheme scheme) {
  static std::map<QuantScheme, std::string> dirs;
  auto it = dirs.find(scheme);
  if (it != dirs.end()) return it->second;
  std::string dir = process_scratch_path(kPrefix, std::string(quant_scheme_name(scheme)));
  if (scheme == QuantScheme::kNone) {
    std::filesystem::create_directories(dir);
    write_tiny_weights(parse_model_config(tiny_config_json(Arch::kM3, 256), "tiny"), dir, 5, 3);
    write_file_atomic(dir + "/tokenizer.json", "{\"tiny\": true}\n");
  } else {
    quantize_checkpoint({source_dir(QuantScheme::kNone), dir, scheme, false});
  }
  return dirs.emplace(scheme, dir).first->second;
}

inline std::string bytes_of(const TensorRef& ref) {
  auto data = ref.data();
  return std::string(reinterpret_cast<const char*>(data.data()), data.size());
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace minimax::quantize_test
