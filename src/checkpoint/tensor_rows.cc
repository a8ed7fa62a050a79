// The tensor rows (checkpoint/tensor_rows.h) and the lookups that read them.
#include "checkpoint/tensor_rows.h"

#include <array>

#include "checkpoint/model_config.h"

namespace minimax {
namespace {

using K = TensorKey;
using R = TensorRole;
using S = TensorScope;
using F = WeightForm;
using P = Presence;
using D = Dim;

// What a parallel mode does with each weight (docs/checkpoint.md, "Split rules"). Under the
// tensor-parallel attention modes heads are divided: q/k/v by output rows, o_proj by input
// columns (partial sums, all-reduced); under DP_EP each rank runs whole requests, so attention is
// replicated. lm_head is split by vocabulary rows and each rank's logits are all-gathered. The
// index branch is replicated: its key is a single head shared by every index-query head, and
// block selection must come out the same on every rank of a group. Routed experts are split by
// their inner width under TP_TP and handed out whole under expert parallelism.
constexpr SplitRules kTpRows = {Split::kRows, Split::kRows, Split::kReplicated};
constexpr SplitRules kTpCols = {Split::kCols, Split::kCols, Split::kReplicated};
constexpr SplitRules kRepl = {Split::kReplicated, Split::kReplicated, Split::kReplicated};
constexpr SplitRules kExpRows = {Split::kRows, Split::kExpert, Split::kExpert};
constexpr SplitRules kExpCols = {Split::kCols, Split::kExpert, Split::kExpert};

// clang-format off
// key, name, hf_path,
//   role, scope, form, presence, rows, cols, split[, replicated_per_head]
constexpr TensorRow kRows[] = {
  {K::kEmbedding, "embedding", "embed_tokens.weight",
    R::kEmbedding, S::kModel, F::kPlain, P::kAlways, D::kVocab, D::kHidden, kRepl},
  {K::kInputNorm, "input_norm", "input_layernorm.weight",
    R::kNorm, S::kLayer, F::kPlain, P::kAlways, D::kHidden, D::kNone, kRepl},
  {K::kQProj, "q_proj", "self_attn.q_proj.weight",
    R::kAttention, S::kLayer, F::kLinear, P::kAlways, D::kQWidth, D::kHidden, kTpRows},
  {K::kKProj, "k_proj", "self_attn.k_proj.weight",
    R::kAttention, S::kLayer, F::kLinear, P::kAlways, D::kKvWidth, D::kHidden, kTpRows},
  {K::kVProj, "v_proj", "self_attn.v_proj.weight",
    R::kAttention, S::kLayer, F::kLinear, P::kAlways, D::kKvWidth, D::kHidden, kTpRows},
  {K::kOProj, "o_proj", "self_attn.o_proj.weight",
    R::kAttention, S::kLayer, F::kLinear, P::kAlways, D::kHidden, D::kQWidth, kTpCols},
  {K::kQNorm, "q_norm", "self_attn.q_norm.weight",
    R::kQkNorm, S::kLayer, F::kPlain, P::kQkNorm, D::kQNormWidth, D::kNone, kTpRows, true},
  {K::kKNorm, "k_norm", "self_attn.k_norm.weight",
    R::kQkNorm, S::kLayer, F::kPlain, P::kQkNorm, D::kKNormWidth, D::kNone, kTpRows, true},
  {K::kIndexQProj, "index_q_proj", "self_attn.index_q_proj.weight",
    R::kIndexBranch, S::kLayer, F::kLinear, P::kSparseLayer, D::kIndexQWidth, D::kHidden, kRepl},
  {K::kIndexKProj, "index_k_proj", "self_attn.index_k_proj.weight",
    R::kIndexBranch, S::kLayer, F::kLinear, P::kSparseLayer, D::kIndexDim, D::kHidden, kRepl},
  {K::kIndexQNorm, "index_q_norm", "self_attn.index_q_norm.weight",
    R::kIndexBranch, S::kLayer, F::kPlain, P::kSparseLayer, D::kIndexDim, D::kNone, kRepl},
  {K::kIndexKNorm, "index_k_norm", "self_attn.index_k_norm.weight",
    R::kIndexBranch, S::kLayer, F::kPlain, P::kSparseLayer, D::kIndexDim, D::kNone, kRepl},
  {K::kPostNorm, "post_norm", "post_attention_layernorm.weight",
    R::kNorm, S::kLayer, F::kPlain, P::kAlways, D::kHidden, D::kNone, kRepl},
  {K::kDenseGate, "dense_gate", "mlp.gate_proj.weight",
    R::kDenseFfn, S::kLayer, F::kLinear, P::kDenseLayer, D::kDenseFfn, D::kHidden, kTpRows},
  {K::kDenseUp, "dense_up", "mlp.up_proj.weight",
    R::kDenseFfn, S::kLayer, F::kLinear, P::kDenseLayer, D::kDenseFfn, D::kHidden, kTpRows},
  {K::kDenseDown, "dense_down", "mlp.down_proj.weight",
    R::kDenseFfn, S::kLayer, F::kLinear, P::kDenseLayer, D::kHidden, D::kDenseFfn, kTpCols},
  // Not a Linear: no MiniMax release or loader quantizes it (a quantized gate breaks vLLM;
  // spec/formats.md §4.1), and the releases store it and the bias as F32.
  {K::kRouter, "router", "block_sparse_moe.gate.weight",
    R::kRouter, S::kLayer, F::kMatrix, P::kMoeLayer, D::kExperts, D::kHidden, kRepl},
  {K::kRouterBias, "router_bias", "block_sparse_moe.e_score_correction_bias",
    R::kRouterBias, S::kLayer, F::kPlain, P::kRoutingBias, D::kExperts, D::kNone, kRepl},
  // HF Mixtral's w1 (gate), w3 (up), w2 (down).
  {K::kExpertGate, "expert_gate", "w1.weight",
    R::kRoutedExpert, S::kExpert, F::kLinear, P::kMoeLayer, D::kExpertFfn, D::kHidden, kExpRows},
  {K::kExpertUp, "expert_up", "w3.weight",
    R::kRoutedExpert, S::kExpert, F::kLinear, P::kMoeLayer, D::kExpertFfn, D::kHidden, kExpRows},
  {K::kExpertDown, "expert_down", "w2.weight",
    R::kRoutedExpert, S::kExpert, F::kLinear, P::kMoeLayer, D::kHidden, D::kExpertFfn, kExpCols},
  {K::kSharedGate, "shared_gate", "block_sparse_moe.shared_experts.gate_proj.weight",
    R::kSharedExpert, S::kLayer, F::kLinear, P::kSharedExpert, D::kSharedFfn, D::kHidden, kTpRows},
  {K::kSharedUp, "shared_up", "block_sparse_moe.shared_experts.up_proj.weight",
    R::kSharedExpert, S::kLayer, F::kLinear, P::kSharedExpert, D::kSharedFfn, D::kHidden, kTpRows},
  {K::kSharedDown, "shared_down", "block_sparse_moe.shared_experts.down_proj.weight",
    R::kSharedExpert, S::kLayer, F::kLinear, P::kSharedExpert, D::kHidden, D::kSharedFfn, kTpCols},
  {K::kFinalNorm, "final_norm", "norm.weight",
    R::kFinalNorm, S::kModel, F::kPlain, P::kAlways, D::kHidden, D::kNone, kRepl},
  {K::kLmHead, "lm_head", "",
    R::kLmHead, S::kModel, F::kLinear, P::kUntiedHead, D::kVocab, D::kHidden, kTpRows},
};
// clang-format on

// Every key has exactly one row, and the row of key k is found through kRowOf[k].
constexpr std::array<int, kNumTensorKeys> row_index() {
  std::array<int, kNumTensorKeys> index{};
  index.fill(-1);
  for (int i = 0; i < int(std::size(kRows)); ++i) {
    const int k = int(kRows[i].key);
    index[k] = index[k] == -1 ? i : -2;  // -2: a second row for the key
  }
  return index;
}
constexpr std::array<int, kNumTensorKeys> kRowOf = row_index();
constexpr bool every_key_once() {
  for (int i : kRowOf)
    if (i < 0) return false;
  return true;
}
static_assert(every_key_once(), "every TensorKey needs exactly one row in kRows");

// The names of the roles, in TensorRole's order.
constexpr std::string_view kRoleNames[] = {
    "embedding", "lm_head",     "final_norm",      "norm",          "attention", "qk_norm",
    "router",    "router_bias", "routed_expert",   "shared_expert", "dense_ffn", "index_branch",
    "mtp",       "vision",      "rotary_inv_freq", "unknown"};
static_assert(std::size(kRoleNames) == size_t(TensorRole::kUnknown) + 1, "one name per TensorRole");

bool present(Presence presence, int layer, const ModelConfig& c) {
  switch (presence) {
    case P::kAlways:
      return true;
    case P::kUntiedHead:
      return !c.tie_word_embeddings;
    case P::kQkNorm:
      return c.use_qk_norm;
    case P::kSparseLayer:
      return c.is_sparse_layer(layer);
    case P::kMoeLayer:
      return c.is_moe_layer(layer);
    case P::kRoutingBias:
      return c.is_moe_layer(layer) && c.use_routing_bias;
    case P::kSharedExpert:
      return c.is_moe_layer(layer) && c.n_shared_experts > 0;
    case P::kDenseLayer:
      return !c.is_moe_layer(layer);
  }
  return false;
}

// Whether the id's layer and expert indices are the ones its scope carries and exist in `c`.
bool indices_fit(const TensorRow& row, const TensorId& id, const ModelConfig& c) {
  switch (row.scope) {
    case S::kModel:
      return id.layer == -1 && id.expert == -1;
    case S::kLayer:
      return id.layer >= 0 && id.layer < c.num_layers && id.expert < 0;
    case S::kExpert:
      return id.layer >= 0 && id.layer < c.num_layers && id.expert >= 0 &&
             id.expert < c.num_experts;
  }
  return false;
}

}  // namespace

std::span<const TensorRow> tensor_rows() { return kRows; }

const TensorRow& tensor_row(TensorKey key) { return kRows[kRowOf.at(size_t(key))]; }

TensorRole tensor_key_role(TensorKey key) { return tensor_row(key).role; }

bool config_has_tensor(const TensorId& id, const ModelConfig& c) {
  const TensorRow& row = tensor_row(id.key);
  return indices_fit(row, id, c) && present(row.presence, id.layer, c);
}

SplitRules tensor_split_rules(TensorKey key, const ModelConfig& c) {
  const TensorRow& row = tensor_row(key);
  if (row.replicated_per_head && c.qk_norm != QkNormKind::kPerLayer) return kRepl;
  return row.split;
}

int64_t dim_size(Dim dim, const ModelConfig& c) {
  const bool per_layer = c.qk_norm == QkNormKind::kPerLayer;
  switch (dim) {
    case D::kNone:
      return 0;
    case D::kHidden:
      return c.hidden_size;
    case D::kVocab:
      return c.vocab_size;
    case D::kQWidth:
      return int64_t(c.num_heads) * c.head_dim;
    case D::kKvWidth:
      return int64_t(c.num_kv_heads) * c.head_dim;
    case D::kQNormWidth:
      return per_layer ? dim_size(D::kQWidth, c) : c.head_dim;
    case D::kKNormWidth:
      return per_layer ? dim_size(D::kKvWidth, c) : c.head_dim;
    case D::kIndexQWidth:
      return int64_t(c.sparse.num_index_heads) * c.sparse.index_dim;
    case D::kIndexDim:
      return c.sparse.index_dim;
    case D::kDenseFfn:
      return c.dense_intermediate_size;
    case D::kExperts:
      return c.num_experts;
    case D::kExpertFfn:
      return c.intermediate_size;
    case D::kSharedFfn:
      return c.shared_intermediate_size;
  }
  return 0;
}

std::string_view tensor_role_name(TensorRole role) {
  const size_t i = size_t(role);
  return i < std::size(kRoleNames) ? kRoleNames[i] : "unknown";
}

// The TensorKey helpers of tensor_key.h, read from the rows.
std::string_view tensor_key_name(TensorKey key) { return tensor_row(key).name; }
bool key_has_layer(TensorKey key) { return tensor_row(key).scope != S::kModel; }
bool key_has_expert(TensorKey key) { return tensor_row(key).scope == S::kExpert; }

}  // namespace minimax
