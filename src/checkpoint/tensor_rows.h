// The tensor rows: one row per TensorKey with every fact about that weight (its name, its module
// path in the MiniMax HF spelling, role, whether it is a matrix or a quantizable Linear, when a
// config has it, its shape, and its split in each parallel mode), in the manner of gemma.cpp's
// tensor_info.cc. Adding a weight is a TensorKey value and a row; the table, the names, the
// classification and the split rules all read the rows instead of switching on the key.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "checkpoint/tensor_key.h"

namespace minimax {

struct ModelConfig;

// What a tensor is for. Table keys map onto the first eleven; the last four name what a checkpoint
// may hold that the engine skips or does not know.
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

// Which indices a weight's TensorId carries.
enum class TensorScope : uint8_t {
  kModel,   // none: embedding, final norm, lm_head
  kLayer,   // the decoder layer
  kExpert,  // the layer and the routed expert
};

// How a weight is stored and quantized.
enum class WeightForm : uint8_t {
  kPlain,   // a vector or the embedding table: one tensor, never quantized
  kMatrix,  // a matrix that no scheme quantizes (the router) but that may carry side tensors
  kLinear,  // a Linear weight [out, in] that a quantization scheme may quantize
};

// When a config has the weight, beyond its layer and expert existing.
enum class Presence : uint8_t {
  kAlways,
  kUntiedHead,    // unless tie_word_embeddings
  kQkNorm,        // use_qk_norm
  kSparseLayer,   // M3 MSA layers
  kMoeLayer,      // MoE layers (and, for experts, expert < num_experts)
  kRoutingBias,   // MoE layers with use_routing_bias
  kSharedExpert,  // MoE layers with n_shared_experts > 0
  kDenseLayer,    // M3 dense-FFN layers
};

// One dimension of a logical shape, named by the config fields that set it.
enum class Dim : uint8_t {
  kNone,         // the shape has one dimension fewer
  kHidden,       // hidden_size
  kVocab,        // vocab_size
  kQWidth,       // num_heads * head_dim
  kKvWidth,      // num_kv_heads * head_dim
  kQNormWidth,   // M2 (per layer): the q width; M3 (per head): head_dim
  kKNormWidth,   // M2: the kv width; M3: head_dim
  kIndexQWidth,  // num_index_heads * index_dim
  kIndexDim,     // index_dim
  kDenseFfn,     // dense_intermediate_size
  kExperts,      // num_experts
  kExpertFfn,    // intermediate_size
  kSharedFfn,    // shared_intermediate_size
};

struct TensorRow {
  TensorKey key;
  std::string_view name;  // "q_proj": messages and tests
  // The HF module path after the scope's prefix: the record's tensor_prefix (model scope),
  // "layers.N." (layer) or "layers.N.block_sparse_moe.experts.E." (expert). Empty for lm_head,
  // whose full name is the record's lm_head_name. Every MiniMax record spells it this way.
  std::string_view hf_path;
  TensorRole role;
  TensorScope scope;
  WeightForm form;
  Presence presence;
  Dim rows, cols;  // the logical, unquantized shape [rows, cols] ([rows] when cols is kNone)
  SplitRules split;
  // M2's q/k norm weight has an entry per element of the whole projection and is divided with the
  // heads; M3's per-head [head_dim] weight serves every head, so it is replicated there.
  bool replicated_per_head = false;
};

// Every row, in the tensor table's order: the model-scope rows before and after the decoder
// layers, and within a layer its rows in order, a routed expert's rows together.
std::span<const TensorRow> tensor_rows();
const TensorRow& tensor_row(TensorKey key);

TensorRole tensor_key_role(TensorKey key);
// Whether `config` has the weight `id` (the layer and expert exist and the row's presence holds).
bool config_has_tensor(const TensorId& id, const ModelConfig& config);
// The split rules of a weight of `config`.
SplitRules tensor_split_rules(TensorKey key, const ModelConfig& config);
// The size of one dimension in `config`.
int64_t dim_size(Dim dim, const ModelConfig& config);

}  // namespace minimax
