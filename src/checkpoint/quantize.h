// `minimax quantize`: re-encodes a checkpoint in any published layout (BF16, MiniMax block FP8,
// compressed-tensors FP8, MiniMax-M3 MXFP8, AMD Quark MXFP4 with or without FP8 attention, ModelOpt
// NVFP4) in another, with the tensor names, scale tensors and quantization_config those releases
// carry. Each Linear is decoded exactly to float and encoded in the target layout in one pass,
// shard by shard under DST.partial with convert's resume manifest (resumable_output.h), so memory
// stays bounded by a few Linears whatever the checkpoint's size; `keep` leaves the Linears of some
// roles as they are. docs/quantize.md describes it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "checkpoint/quant_config.h"
#include "checkpoint/resumable_output.h"
#include "checkpoint/tensor_rows.h"

namespace minimax {

struct QuantizeOptions {
  std::string input_dir;
  std::string output_dir;
  QuantScheme scheme = QuantScheme::kMxfp4;
  bool force = false;
  bool show_progress = false;  // a bar on stderr over the output bytes
  std::vector<TensorRole>
      keep{};           // Linears of these roles are copied as they are (parse_keep_roles)
  bool resume = false;  // continue from DST.partial (resumable_output.h)
  size_t threads = 1;   // Linears encoded at once (0 = one per hardware thread)
  // Called after each output shard is complete on disk, with the number completed by this run.
  // (The CLI's hidden --stop-after-shards uses it to simulate a kill.)
  std::function<void(size_t)> after_shard{};
};

struct QuantizeSummary {
  QuantScheme from = QuantScheme::kNone, to = QuantScheme::kNone;
  size_t tensors_quantized = 0;  // Linears decoded and encoded in the target layout
  size_t tensors_kept = 0;       // Linears of a --keep role, their tensors copied as they are
  size_t tensors_copied = 0;     // every other tensor, copied byte for byte
  size_t scales_consumed = 0;    // source scale tensors read by their Linear
  ResumeCounts shards;
  uint64_t bytes_in = 0;   // tensor data of the source
  uint64_t bytes_out = 0;  // bytes of the output shard files
  double seconds = 0;
};

QuantizeSummary quantize_checkpoint(const QuantizeOptions& options);

// The closing report: counts, shards, sizes, time, and the two `minimax perplexity` runs that
// measure what the new layout costs against the source.
std::string format_quantize_summary(const QuantizeSummary& summary, const QuantizeOptions& options);

// Parses a quant_scheme_name ("fp8-block", "mxfp8", "mxfp4-fp8attn", ..., "bf16" for none); Error
// naming the known names otherwise.
QuantScheme parse_quant_scheme(const std::string& text);

// Copies every file of `src_dir` that is not a weight file (safetensors shards, the index,
// config.json, hf_quant_config.json) into `dst_dir`: tokenizer, templates, generation config.
void copy_side_files(const std::string& src_dir, const std::string& dst_dir);

}  // namespace minimax
