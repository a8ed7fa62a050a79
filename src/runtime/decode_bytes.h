// Weight bytes one decoded token reads: the roofline of CPU decode, which streams every active
// weight byte once per token. Counted from the loaded weights in their stored (or repacked)
// format, scales included.
#pragma once

#include <cstdint>

#include "checkpoint/model_config.h"
#include "model/model_weights.h"

namespace minimax {

struct DecodeBytes {
  uint64_t attention = 0;       // q, k, v, o (+ MSA index projections), QK norm weights
  uint64_t router = 0;          // gate projection + selection bias
  uint64_t routed_experts = 0;  // top-k experts per MoE layer
  uint64_t shared_expert = 0;   // M3
  uint64_t dense_ffn = 0;       // M3's dense layers
  uint64_t norms = 0;           // layer norms and the final norm
  uint64_t embedding_row = 0;   // the token's embedding row
  uint64_t lm_head = 0;
  uint64_t total() const {
    return attention + router + routed_experts + shared_expert + dense_ffn + norms + embedding_row +
           lm_head;
  }
};

DecodeBytes decode_bytes_per_token(const ModelWeights& weights, const ModelConfig& config);

// Experts of one MoE layer that `streams` tokens touch together when each picks `top_k` of
// `num_experts` evenly at random: E·(1 − (1 − k/E)^streams), the union's expected size.
double expected_distinct_experts(int64_t num_experts, int64_t top_k, int64_t streams);

// Weight bytes one engine step that decodes `streams` tokens (one per stream) reads: every shared
// weight once, an embedding row per token, and the union of the tokens' routed experts
// (expected_distinct_experts of them per layer instead of top_k). KV cache reads are not counted.
double step_weight_bytes(const DecodeBytes& per_token, int64_t num_experts, int64_t top_k,
                         int64_t streams);

// What one token's routed experts of an MoE layer amount to, in `measure(expert)` units (bytes,
// weights), as computed in T. Every expert has the same shape and format, so the mean over the
// held ones is exact. Under expert parallelism this rank holds some of them (the others are empty
// views) and runs its share of a token's top_k: held / num_experts of them on average.
template <class T, class Measure>
T routed_experts_per_token(const MoeWeights& moe, int experts_per_tok, Measure measure) {
  T held_total = 0, held = 0;
  for (const ExpertWeights& e : moe.experts) {
    if (e.gate.data == nullptr) continue;
    held_total += measure(e);
    ++held;
  }
  if (held == 0) return 0;
  return held_total / held * experts_per_tok * held / static_cast<T>(moe.experts.size());
}

}  // namespace minimax
