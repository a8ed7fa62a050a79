// The speculative-decoding cost model of a loaded model (runtime/spec/draft_policy.h): its experts,
// routed experts per token, and the share of a decode step's weight bytes they are.
#pragma once

#include "model/model.h"
#include "runtime/spec/draft_policy.h"

namespace minimax {

StepCostModel step_cost_model_for(const Model& model);

}  // namespace minimax
