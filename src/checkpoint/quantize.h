// `minimax quantize`: turns a BF16 checkpoint into one of the published quantized layouts (block
// FP8 as MiniMax releases it, compressed-tensors FP8 per channel, MiniMax's MXFP8, AMD Quark MXFP4
// with or without FP8 attention, ModelOpt NVFP4), with the tensor names, scale tensors and
// quantization_config those releases carry. It is a tool for making test checkpoints: one shard at
// a time is held in memory.
#pragma once

#include <string>

#include "checkpoint/quant_config.h"

namespace minimax {

struct QuantizeOptions {
  std::string input_dir;
  std::string output_dir;
  QuantScheme scheme = QuantScheme::kMxfp4;
  bool force = false;
  bool show_progress = false;  // a bar on stderr over the input bytes
};

struct QuantizeSummary {
  size_t tensors_quantized = 0;
  size_t tensors_copied = 0;
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
};

QuantizeSummary quantize_checkpoint(const QuantizeOptions& options);

// Parses a quant_scheme_name ("fp8-block", "mxfp8", "mxfp4-fp8attn", ..., "bf16" for none); Error
// naming the known names otherwise.
QuantScheme parse_quant_scheme(const std::string& text);

// Copies every file of `src_dir` that is not a weight file (safetensors shards, the index,
// config.json, hf_quant_config.json) into `dst_dir`: tokenizer, templates, generation config.
void copy_side_files(const std::string& src_dir, const std::string& dst_dir);

}  // namespace minimax
