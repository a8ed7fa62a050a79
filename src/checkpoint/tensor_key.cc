// Names of the tensor keys and splits (checkpoint/tensor_key.h).
#include "checkpoint/tensor_key.h"

namespace minimax {

std::string_view tensor_key_name(TensorKey key) {
  switch (key) {
    case TensorKey::kEmbedding:
      return "embedding";
    case TensorKey::kFinalNorm:
      return "final_norm";
    case TensorKey::kLmHead:
      return "lm_head";
    case TensorKey::kInputNorm:
      return "input_norm";
    case TensorKey::kPostNorm:
      return "post_norm";
    case TensorKey::kQProj:
      return "q_proj";
    case TensorKey::kKProj:
      return "k_proj";
    case TensorKey::kVProj:
      return "v_proj";
    case TensorKey::kOProj:
      return "o_proj";
    case TensorKey::kQNorm:
      return "q_norm";
    case TensorKey::kKNorm:
      return "k_norm";
    case TensorKey::kIndexQProj:
      return "index_q_proj";
    case TensorKey::kIndexKProj:
      return "index_k_proj";
    case TensorKey::kIndexQNorm:
      return "index_q_norm";
    case TensorKey::kIndexKNorm:
      return "index_k_norm";
    case TensorKey::kRouter:
      return "router";
    case TensorKey::kRouterBias:
      return "router_bias";
    case TensorKey::kExpertGate:
      return "expert_gate";
    case TensorKey::kExpertUp:
      return "expert_up";
    case TensorKey::kExpertDown:
      return "expert_down";
    case TensorKey::kSharedGate:
      return "shared_gate";
    case TensorKey::kSharedUp:
      return "shared_up";
    case TensorKey::kSharedDown:
      return "shared_down";
    case TensorKey::kDenseGate:
      return "dense_gate";
    case TensorKey::kDenseUp:
      return "dense_up";
    case TensorKey::kDenseDown:
      return "dense_down";
  }
  return "unknown";
}

bool key_has_layer(TensorKey key) {
  return key != TensorKey::kEmbedding && key != TensorKey::kFinalNorm && key != TensorKey::kLmHead;
}

bool key_has_expert(TensorKey key) {
  return key == TensorKey::kExpertGate || key == TensorKey::kExpertUp ||
         key == TensorKey::kExpertDown;
}

std::string_view split_name(Split split) {
  switch (split) {
    case Split::kReplicated:
      return "replicated";
    case Split::kRows:
      return "rows";
    case Split::kCols:
      return "cols";
    case Split::kExpert:
      return "expert";
  }
  return "unknown";
}

}  // namespace minimax
