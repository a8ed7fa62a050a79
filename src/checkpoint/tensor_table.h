// The one canonical tensor table: every weight the engine reads, with its HF name, role and logical
// shape, and the tensors each quantized layout stores for it (spec/model.md §3.1, §5.7).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/model_config.h"
#include "checkpoint/quant_config.h"
#include "formats/dtype.h"

namespace minimax {

enum class TensorRole {
  kEmbedding,
  kLmHead,
  kFinalNorm,
  kNorm,           // input_layernorm / post_attention_layernorm
  kAttention,      // q/k/v/o projections
  kQkNorm,         // self_attn.q_norm / k_norm
  kRouter,         // block_sparse_moe.gate
  kRouterBias,     // block_sparse_moe.e_score_correction_bias
  kRoutedExpert,   // block_sparse_moe.experts.E.w1/w2/w3
  kSharedExpert,   // block_sparse_moe.shared_experts.gate/up/down_proj (M3)
  kDenseFfn,       // mlp.gate/up/down_proj (M3 dense layers)
  kIndexBranch,    // self_attn.index_q/k_proj, index_q/k_norm (M3 sparse layers)
  kMtp,            // multi-token-prediction layers: skipped
  kVision,         // vision tower / projector: skipped (text only)
  kRotaryInvFreq,  // a saved rotary_emb.inv_freq buffer: skipped (recomputed)
  kUnknown,
};
std::string_view tensor_role_name(TensorRole role);  // "embedding", "routed_expert", ...

struct TensorSpec {
  std::string name;  // full HF name, e.g. "model.layers.3.block_sparse_moe.experts.7.w1.weight"
  TensorRole role = TensorRole::kUnknown;
  std::vector<int64_t> shape;  // logical, unquantized; Linear weights are [out, in]
  int layer = -1, expert = -1;
  bool linear = false;  // a Linear weight that a quantization scheme may quantize
};

// Every tensor the engine needs, in a stable order: embedding; per layer the norms, attention,
// index branch, router, experts (w1, w3, w2 each), shared expert or dense FFN; final norm; lm_head
// (absent when tie_word_embeddings). The router is not `linear`: no MiniMax release or loader
// quantizes it (a quantized gate breaks vLLM; spec/formats.md §4.1).
std::vector<TensorSpec> tensor_table(const ModelConfig& config);

// The role of any tensor name a checkpoint may hold, including quantization side tensors
// ("...w1.weight_scale_inv" is a kRoutedExpert) and the ones the engine skips. Names that do not
// fit `config` (layer or expert out of range, an index branch on a dense-attention layer, an MoE
// tensor on a dense layer, ...) are kUnknown.
TensorRole classify_tensor(const std::string& hf_name, const ModelConfig& config);
bool engine_skips(TensorRole role);  // kMtp, kVision, kRotaryInvFreq

// "model.layers.0.self_attn.q_proj.weight" -> "model.layers.0.self_attn.q_proj".
std::string module_name(const std::string& tensor_name);

struct StoredTensor {
  std::string name;
  DType dtype = DType::kBF16;
  std::vector<int64_t> shape;
};

// The tensors a checkpoint of `quant` stores for one logical tensor. Quantized Linear [out, in]:
//  - kFp8Block:   weight F8_E4M3 [out,in] + weight_scale_inv F32 [ceil(out/bn), ceil(in/bk)]
//  - kFp8Channel: weight F8_E4M3 [out,in] + weight_scale F32 [out,1]
//  - kMxfp4:      weight U8 [out,in/2] + weight_scale U8 [out,in/32]
//  - kNvfp4:      weight U8 [out,in/2] + weight_scale F8_E4M3 [out,in/16] + weight_scale_2 F32 []
//                 + input_scale F32 []
// Anything else is one tensor in its release dtype: BF16, except the router gate and
// e_score_correction_bias, which the official releases store as F32. Throws Error naming the
// tensor when `in` is not a multiple of the format's block (32 for MXFP4, 16 for NVFP4).
std::vector<StoredTensor> stored_tensors(const TensorSpec& spec, const QuantConfig& quant);

}  // namespace minimax
