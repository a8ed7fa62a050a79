// What `minimax convert` writes for a Quark MXFP4 checkpoint: per source shard an output shard of
// the same name holding the same tensors, each with where its bytes come from (routed experts to
// FP8 + F32 row scales, other MXFP4 weights to BF16, Quark per-channel FP8 layers (AMD's FP8
// attention) copied as they are, everything else copied), and the compressed-tensors config.json.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/model_config.h"
#include "checkpoint/mxfp4_to_fp8_exact.h"
#include "checkpoint/quant_config.h"
#include "formats/safetensors_writer.h"
#include "formats/tensor_store.h"

namespace minimax {

enum class OutputKind {
  kCopy,        // the source tensor's bytes as they are (a Quark per-channel FP8 scale F32 [out]
                // keeps its bytes and is declared [out, 1], compressed-tensors' channel shape)
  kFp8Weight,   // routed expert weight: MXFP4 -> F8_E4M3 [out, in]
  kFp8Scale,    // routed expert weight_scale: F32 [out, 1] holding 2^S per row
  kBf16Weight,  // any other MXFP4 weight (M3 shared experts): -> BF16 [out, in]
};

// One MXFP4 Linear in the source: packed weight U8 [out, in/2] and E8M0 scales U8 [out, in/32],
// possibly in different shards.
struct Mxfp4Source {
  TensorRef weight, scales;
  int64_t rows = 0, cols = 0;  // logical [out, in]
};

struct OutputTensor {
  TensorDecl decl;
  OutputKind kind = OutputKind::kCopy;
  TensorRef copy_source;  // kCopy
  Mxfp4Source mxfp4;      // the other kinds
};

struct OutputShard {
  std::string file_name;  // as in the source ("model-00001-of-00047.safetensors")
  std::vector<OutputTensor> tensors;
  uint64_t data_bytes() const;
};

struct ConvertPlan {
  std::vector<OutputShard> shards;
  bool sharded = false;   // write model.safetensors.index.json
  nlohmann::json config;  // the whole config.json to write
  size_t fp8_weights = 0, bf16_weights = 0, copied = 0, dropped_scales = 0;
  size_t fp8_copied = 0;      // source FP8 Linears (Quark FP8 layers) copied with their scales
  uint64_t source_bytes = 0;  // tensor data bytes read from the source
  uint64_t output_bytes = 0;  // tensor data bytes written
};

// The source's config.json with its quantization_config (top level, or text_config's for a
// multimodal config that keeps it there) replaced by the compressed-tensors FP8_DYNAMIC config;
// for Fp8Target::kGaudi2 it adds "fp8_dtype_flavor": "float8_e4m3fnuz", which tells vllm-gaudi the
// weights are already within Gaudi 2's 240 so it must not halve them (spec/formats.md §3.1).
// FP8 layers of the Quark source `quant` (copied) are left out of its ignore list; `also_ignore`
// adds modules outside the model's tensor table (MTP layers) to it.
nlohmann::json converted_config_json(const ModelConfig& model, const QuantConfig& quant,
                                     Fp8Target target,
                                     const std::vector<std::string>& also_ignore = {});

// Builds the plan for a source whose quantization_config is `quant` (kMxfp4 or kMxfp4Fp8Attn).
// Errors name the shard file and tensor: a routed expert that is not MXFP4 (U8 weight + U8
// weight_scale), a scale tensor whose shape does not match its weight, a routed expert with other
// companion tensors (static input scales), a Quark FP8 layer the output's one FP8 scheme cannot
// express (per-tensor weight scales, static input scales), a config that would disagree with the
// tensors written.
ConvertPlan plan_conversion(const TensorStore& source, const ModelConfig& model,
                            const QuantConfig& quant, Fp8Target target);

// The order SafetensorsWriter lays `decls` out in: descending element alignment, ties in
// declaration order (its documented contract), so a kept shard can be compared byte for byte.
std::vector<TensorDecl> safetensors_write_order(std::vector<TensorDecl> decls);

// The safetensors metadata every output shard carries.
const std::map<std::string, std::string>& converted_shard_metadata();

}  // namespace minimax
