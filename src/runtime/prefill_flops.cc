// Operations of a prefill (runtime/prefill_flops.h).
#include "runtime/prefill_flops.h"

#include "runtime/decode_bytes.h"

namespace minimax {
namespace {

// Weights of a view (0 for an empty one).
double elements(const WeightView& w) {
  return w.data == nullptr ? 0.0 : static_cast<double>(w.rows) * static_cast<double>(w.cols);
}

double ffn_elements(const FfnWeights& f) {
  return elements(f.gate) + elements(f.up) + elements(f.down);
}

}  // namespace

PrefillFlops prefill_flops(const ModelWeights& weights, const ModelConfig& config) {
  PrefillFlops f;
  for (const LayerWeights& layer : weights.layers) {
    const AttentionWeights& a = layer.attn;
    f.per_token += elements(a.q) + elements(a.k) + elements(a.v) + elements(a.o);
    if (layer.sparse) f.per_token += elements(a.index_q) + elements(a.index_k);
    if (!layer.moe) {
      f.per_token += ffn_elements(layer.dense);
      continue;
    }
    const MoeWeights& m = layer.moe_weights;
    f.per_token += elements(m.router);
    f.per_token +=
        routed_experts_per_token<double>(m, config.experts_per_tok, [](const ExpertWeights& e) {
          return elements(e.gate) + elements(e.up) + elements(e.down);
        });
    if (m.has_shared) f.per_token += ffn_elements(m.shared);
  }
  f.lm_head = elements(weights.lm_head);
  return f;
}

}  // namespace minimax
