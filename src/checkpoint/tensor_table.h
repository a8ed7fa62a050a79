// The one canonical tensor table: every weight the engine reads, with its typed id, HF name (the
// architecture record's spelling of the id), role, logical shape and split across ranks, and the
// tensors each quantized layout stores for it (spec/model.md §3.1, §5.7). Loaders look weights up
// by id (TensorTable::at), never by building names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "checkpoint/model_config.h"
#include "checkpoint/quant_config.h"
#include "checkpoint/tensor_key.h"
#include "checkpoint/tensor_rows.h"
#include "formats/dtype.h"

namespace minimax {

struct TensorSpec {
  std::string name;  // full HF name, e.g. "model.layers.3.block_sparse_moe.experts.7.w1.weight"
  TensorRole role = TensorRole::kUnknown;
  std::vector<int64_t> shape;   // logical, unquantized; Linear weights are [out, in]
  int layer = -1, expert = -1;  // the same as id.layer / id.expert
  bool linear = false;          // a Linear weight that a quantization scheme may quantize
  TensorId id;
  SplitRules split;  // how ranks divide it in each parallel mode (docs/checkpoint.md)
};

// Every tensor the engine needs, in the rows' order (tensor_rows.h): embedding; per layer the
// norms, attention, index branch, dense FFN or router, experts (w1, w3, w2 each) and shared
// expert; final norm; lm_head (absent when tie_word_embeddings).
std::vector<TensorSpec> tensor_table(const ModelConfig& config);

// The table with lookup by id: what loaders use.
class TensorTable {
 public:
  explicit TensorTable(const ModelConfig& config);
  const std::vector<TensorSpec>& entries() const { return entries_; }
  // The entry of `id`; Error naming the id when this config has no such weight.
  const TensorSpec& at(const TensorId& id) const;
  const TensorSpec* find(const TensorId& id) const;  // null when absent

 private:
  std::vector<TensorSpec> entries_;
  std::unordered_map<uint64_t, size_t> index_;
};

// The role of any tensor name a checkpoint may hold, including quantization side tensors
// ("...w1.weight_scale_inv" is a kRoutedExpert) and the ones the engine skips. Names that do not
// fit `config` (layer or expert out of range, an index branch on a dense-attention layer, an MoE
// tensor on a dense layer, ...) are kUnknown.
TensorRole classify_tensor(const std::string& hf_name, const ModelConfig& config);
// The id of a name the table has (a quantization side tensor gives its Linear's id); nullopt for
// anything classify_tensor does not call a table role.
std::optional<TensorId> tensor_id_of(const std::string& hf_name, const ModelConfig& config);
bool engine_skips(TensorRole role);  // kMtp, kVision, kRotaryInvFreq

// "model.layers.0.self_attn.q_proj.weight" -> "model.layers.0.self_attn.q_proj".
std::string module_name(const std::string& tensor_name);

struct StoredTensor {
  std::string name;
  DType dtype = DType::kBF16;
  std::vector<int64_t> shape;
};

// The tensors a checkpoint of `quant` stores for one logical tensor. A Linear [out, in] stored in
// layout (QuantConfig::layout_of):
//  - kFp8Block:        weight F8_E4M3 [out,in] + weight_scale_inv F32 [ceil(out/bn), ceil(in/bk)]
//  - kFp8Channel:      weight F8_E4M3 [out,in] + weight_scale F32 [out,1]
//  - kQuarkFp8Channel: weight F8_E4M3 [out,in] + weight_scale F32 [out] (+ input_scale F32 [] when
//                      its layer_quant_config entry has static activations)
//  - kQuarkFp8Tensor:  weight F8_E4M3 [out,in] + weight_scale F32 [] (+ input_scale likewise)
//  - kMxfp4:           weight U8 [out,in/2] + weight_scale U8 [out,in/32]
//  - kMxfp8:           weight F8_E4M3 [out,in] + weight_scale_inv U8 [out,in/32] (E8M0 codes)
//  - kNvfp4:           weight U8 [out,in/2] + weight_scale F8_E4M3 [out,in/16] + weight_scale_2
//                      F32 [] + input_scale F32 []
// Anything else is one tensor in its release dtype: BF16, except the router gate and
// e_score_correction_bias, which the official releases store as F32. Throws Error naming the
// tensor when `in` is not a multiple of the format's block (32 for MXFP4 and MXFP8, 16 for NVFP4).
std::vector<StoredTensor> stored_tensors(const TensorSpec& spec, const QuantConfig& quant);

}  // namespace minimax
