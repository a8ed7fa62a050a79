// Operations of a prefill (runtime/prefill_flops.h).
#include "runtime/prefill_flops.h"

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
    // As decode_bytes.cc: the held experts' mean × top_k × the held share.
    double held_elements = 0, held = 0;
    for (const ExpertWeights& e : m.experts) {
      if (e.gate.data == nullptr) continue;
      held_elements += elements(e.gate) + elements(e.up) + elements(e.down);
      ++held;
    }
    if (held > 0)
      f.per_token += held_elements / held * config.experts_per_tok * held /
                     static_cast<double>(m.experts.size());
    if (m.has_shared) f.per_token += ffn_elements(m.shared);
  }
  f.lm_head = elements(weights.lm_head);
  return f;
}

}  // namespace minimax
