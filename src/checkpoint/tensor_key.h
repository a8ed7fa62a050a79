// Typed names of the weights the engine reads: a TensorId (which weight of which layer and
// expert) instead of a spelled Hugging Face name, and how each weight is split across ranks. The
// spelling of an id is the architecture record's (checkpoint/arch/architecture.h); the table
// (checkpoint/tensor_table.h) lists the ids a config has.
#pragma once

#include <cstdint>
#include <string_view>

namespace minimax {

enum class TensorKey : uint8_t {
  kEmbedding,
  kFinalNorm,
  kLmHead,
  kInputNorm,
  kPostNorm,
  kQProj,
  kKProj,
  kVProj,
  kOProj,
  kQNorm,
  kKNorm,
  kIndexQProj,  // M3 MSA index branch, sparse layers only
  kIndexKProj,
  kIndexQNorm,
  kIndexKNorm,
  kRouter,      // block_sparse_moe.gate
  kRouterBias,  // e_score_correction_bias
  kExpertGate,  // routed expert w1
  kExpertUp,    // w3
  kExpertDown,  // w2
  kSharedGate,  // M3 shared expert
  kSharedUp,
  kSharedDown,
  kDenseGate,  // M3 dense-FFN layers
  kDenseUp,
  kDenseDown,
};
inline constexpr int kNumTensorKeys = int(TensorKey::kDenseDown) + 1;

// "embedding", "q_proj", "expert_gate", ... (for messages and tests).
std::string_view tensor_key_name(TensorKey key);
bool key_has_layer(TensorKey key);   // every key but embedding, final norm and lm_head
bool key_has_expert(TensorKey key);  // the three routed-expert projections

// One weight: `layer` is -1 for the model-level keys, `expert` -1 but for routed experts.
struct TensorId {
  TensorKey key = TensorKey::kEmbedding;
  int layer = -1;
  int expert = -1;
  friend bool operator==(const TensorId&, const TensorId&) = default;
};

// How one weight is divided among the ranks of a parallel group. Shapes are HF's [out, in].
enum class Split : uint8_t {
  kReplicated,  // every rank holds all of it
  kRows,        // by output rows (heads, FFN width, vocab): rank r holds a contiguous row range
  kCols,        // by input columns: rank r holds a column range; outputs are partial sums
  kExpert,      // whole routed experts are partitioned among ranks; each held expert is whole
};
std::string_view split_name(Split split);  // "replicated", "rows", "cols", "expert"

// The split of one weight in each parallel mode of src/parallel (the ParallelMode enum lives
// there, a layer above this one, so the three modes are named fields here):
//   tp_tp: attention tensor-parallel, MoE tensor-parallel (experts split by their inner width)
//   tp_ep: attention tensor-parallel, MoE expert-parallel
//   dp_ep: attention data-parallel (each rank its own requests), MoE expert-parallel
// docs/checkpoint.md has the table and the reasons.
struct SplitRules {
  Split tp_tp = Split::kReplicated;
  Split tp_ep = Split::kReplicated;
  Split dp_ep = Split::kReplicated;
  friend bool operator==(const SplitRules&, const SplitRules&) = default;
};

}  // namespace minimax
