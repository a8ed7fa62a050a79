// A loaded model's step cost prior (runtime/spec/model_step_cost.h).
#include "runtime/spec/model_step_cost.h"

#include "runtime/decode_bytes.h"

namespace minimax {

StepCostModel step_cost_model_for(const Model& model) {
  const ModelConfig& config = model.config();
  const DecodeBytes bytes = decode_bytes_per_token(model.weights(), config);
  const double share = bytes.total() > 0 ? static_cast<double>(bytes.routed_experts) /
                                               static_cast<double>(bytes.total())
                                         : 0.0;
  return StepCostModel(config.num_experts, config.experts_per_tok, share);
}

}  // namespace minimax
