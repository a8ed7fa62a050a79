// Active weight bytes per decoded token (runtime/decode_bytes.h).
#include "runtime/decode_bytes.h"

#include <cmath>

#include "base/error.h"

namespace minimax {
namespace {

uint64_t vector_bytes(const std::vector<float>& v) { return v.size() * sizeof(float); }

uint64_t ffn_bytes(const FfnWeights& f) {
  return weight_view_bytes(f.gate) + weight_view_bytes(f.up) + weight_view_bytes(f.down);
}

}  // namespace

DecodeBytes decode_bytes_per_token(const ModelWeights& weights, const ModelConfig& config) {
  DecodeBytes b;
  for (const LayerWeights& layer : weights.layers) {
    const AttentionWeights& a = layer.attn;
    b.attention += weight_view_bytes(a.q) + weight_view_bytes(a.k) + weight_view_bytes(a.v) +
                   weight_view_bytes(a.o) + vector_bytes(a.q_norm) + vector_bytes(a.k_norm);
    if (layer.sparse)
      b.attention += weight_view_bytes(a.index_q) + weight_view_bytes(a.index_k) +
                     vector_bytes(a.index_q_norm) + vector_bytes(a.index_k_norm);
    b.norms += vector_bytes(layer.input_norm) + vector_bytes(layer.post_norm);
    if (!layer.moe) {
      b.dense_ffn += ffn_bytes(layer.dense);
      continue;
    }
    const MoeWeights& m = layer.moe_weights;
    b.router += weight_view_bytes(m.router) + vector_bytes(m.bias);
    b.routed_experts +=
        routed_experts_per_token<uint64_t>(m, config.experts_per_tok, [](const ExpertWeights& e) {
          return weight_view_bytes(e.gate) + weight_view_bytes(e.up) + weight_view_bytes(e.down);
        });
    if (m.has_shared) b.shared_expert += ffn_bytes(m.shared);
  }
  b.norms += vector_bytes(weights.final_norm);
  if (weights.embedding.rows > 0)
    b.embedding_row = weight_view_bytes(weights.embedding) / weights.embedding.rows;
  b.lm_head = weight_view_bytes(weights.lm_head);
  return b;
}

double expected_distinct_experts(int64_t num_experts, int64_t top_k, int64_t streams) {
  if (num_experts <= 0 || top_k <= 0 || top_k > num_experts || streams < 0)
    fail("expected_distinct_experts: {} experts, top-{}, {} streams is not a routing", num_experts,
         top_k, streams);
  const double e = static_cast<double>(num_experts);
  return e * (1.0 - std::pow(1.0 - static_cast<double>(top_k) / e, static_cast<double>(streams)));
}

double step_weight_bytes(const DecodeBytes& per_token, int64_t num_experts, int64_t top_k,
                         int64_t streams) {
  const double shared =
      static_cast<double>(per_token.total() - per_token.routed_experts - per_token.embedding_row);
  const double s = static_cast<double>(streams);
  const double experts = per_token.routed_experts == 0
                             ? 0.0
                             : static_cast<double>(per_token.routed_experts) *
                                   expected_distinct_experts(num_experts, top_k, streams) /
                                   static_cast<double>(top_k);
  return shared + s * static_cast<double>(per_token.embedding_row) + experts;
}

}  // namespace minimax
