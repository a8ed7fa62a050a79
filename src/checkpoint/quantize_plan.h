// What `minimax quantize` writes for a checkpoint in any published layout: per source shard an
// output shard of the same name holding, for each Linear of the tensor table whose weight is in
// that shard, the tensors the target layout stores for it (re-encoded from the exactly decoded
// source), or with --keep its source tensors as they are; everything else copied byte for byte.
// The source's scale tensors are consumed by their Linear; the output config.json is the target
// scheme's with the kept unquantized modules added to its list of unquantized modules.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/model_config.h"
#include "checkpoint/quant_config.h"
#include "checkpoint/tensor_rows.h"
#include "checkpoint/tensor_table.h"
#include "formats/safetensors_writer.h"
#include "formats/tensor_store.h"

namespace minimax {

// The roles --keep accepts: those of the tensor table's Linear rows ("attention", "lm_head", ...;
// "dense" also names "dense_ffn"). Parses "attention,lm_head"; an unknown name is an Error listing
// the valid ones.
std::vector<TensorRole> parse_keep_roles(const std::string& text);
std::string keep_role_names();  // "attention, index_branch, ...", for messages and --help

// A source tensor whose bytes go to the output unchanged. The declared shape may differ where two
// layouts store the same bytes under different shapes (a per-channel FP8 scale: compressed-tensors
// [out, 1], Quark [out]).
struct CopiedTensor {
  TensorRef source;
  TensorDecl decl;
};

// One Linear decoded from `from` and encoded in `to`.
struct RequantizedLinear {
  std::string weight_name;  // "<module>.weight"
  LinearLayout from = LinearLayout::kBf16, to = LinearLayout::kBf16;
  int64_t rows = 0, cols = 0;
  std::vector<StoredTensor> outputs;  // stored_tensors under the target, in encode_weight's order
  std::vector<TensorRef> sources;     // the source tensors it reads (released once it is done)
};

struct QuantizeShard {
  std::string file_name;  // as in the source
  std::vector<CopiedTensor> copies;
  std::vector<RequantizedLinear> linears;
  std::vector<TensorDecl> decls() const;  // every output tensor, copies first
  uint64_t data_bytes() const;
};

struct QuantizePlan {
  std::vector<QuantizeShard> shards;
  bool sharded = false;                           // write model.safetensors.index.json
  nlohmann::json config;                          // the whole config.json to write
  std::optional<nlohmann::json> hf_quant_config;  // ModelOpt's legacy file (nvfp4)
  QuantConfig target;                             // read back from `config`
  size_t requantized = 0, kept = 0, copied = 0, scales_consumed = 0;
  std::vector<std::string> kept_unquantized;  // modules added to the unquantized list
  uint64_t source_bytes = 0;                  // tensor data bytes of the source
  uint64_t output_bytes = 0;                  // tensor data bytes written
};

// Errors name the shard file and tensor: a stored tensor whose dtype or shape is not what the
// source's quantization_config says, a quantized tensor outside the tensor table, a kept tensor
// whose source layout the target cannot express (naming both), a config that would disagree with
// the tensors written.
QuantizePlan plan_quantization(const TensorStore& source, const ModelConfig& model,
                               const QuantConfig& source_quant, QuantScheme target,
                               const std::vector<TensorRole>& keep);

}  // namespace minimax
