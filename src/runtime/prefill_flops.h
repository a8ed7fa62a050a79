// Floating-point operations of a prefill: 2 per weight multiplied per token (a multiply and an
// add), counting what the model really multiplies: the attention projections (and MSA index
// projections), the router, the routed experts (top_k per token; under expert parallelism this
// rank's share), the shared expert and dense FFNs, and lm_head once per prefill chunk (only the
// last token's logits are computed). Attention's score and value products are not counted.
#pragma once

#include <cstdint>

#include "checkpoint/model_config.h"
#include "model/model_weights.h"

namespace minimax {

struct PrefillFlops {
  double per_token = 0;  // weights multiplied per prompt token (all but lm_head)
  double lm_head = 0;    // weights of lm_head (multiplied once per chunk)
  double total(int64_t tokens, int64_t chunk) const {
    const int64_t chunks = (tokens + chunk - 1) / chunk;
    return 2.0 * (per_token * static_cast<double>(tokens) + lm_head * static_cast<double>(chunks));
  }
};

PrefillFlops prefill_flops(const ModelWeights& weights, const ModelConfig& config);

}  // namespace minimax
