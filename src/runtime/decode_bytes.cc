// Active weight bytes per decoded token (runtime/decode_bytes.h).
#include "runtime/decode_bytes.h"

namespace minimax {
namespace {

uint64_t ceil_div(int64_t a, int64_t b) { return static_cast<uint64_t>((a + b - 1) / b); }

uint64_t vector_bytes(const std::vector<float>& v) { return v.size() * sizeof(float); }

uint64_t ffn_bytes(const FfnWeights& f) {
  return weight_view_bytes(f.gate) + weight_view_bytes(f.up) + weight_view_bytes(f.down);
}

}  // namespace

uint64_t weight_view_bytes(const WeightView& w) {
  const auto rows = static_cast<uint64_t>(w.rows);
  const uint64_t codes = rows * static_cast<uint64_t>(weight_row_bytes(w));
  switch (w.format) {
    case WeightFormat::kF32:
    case WeightFormat::kBF16:
      return codes;
    case WeightFormat::kFp8Block:  // f32 per block_rows × block_cols tile
      return codes + 4 * ceil_div(w.rows, w.block_rows) * ceil_div(w.cols, w.block_cols);
    case WeightFormat::kFp8Channel:  // f32 per row
      return codes + 4 * rows;
    case WeightFormat::kMxfp4:  // e8m0 per 32 weights
      return codes + rows * ceil_div(w.cols, 32);
    case WeightFormat::kNvfp4:  // e4m3 per 16 weights, one f32 global scale
      return codes + rows * ceil_div(w.cols, 16) + 4;
  }
  return 0;
}

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
    if (!m.experts.empty()) {
      uint64_t all = 0;  // every expert has the same shape and format; the mean is exact
      for (const ExpertWeights& e : m.experts)
        all += weight_view_bytes(e.gate) + weight_view_bytes(e.up) + weight_view_bytes(e.down);
      b.routed_experts += all / m.experts.size() * config.experts_per_tok;
    }
    if (m.has_shared) b.shared_expert += ffn_bytes(m.shared);
  }
  b.norms += vector_bytes(weights.final_norm);
  if (weights.embedding.rows > 0)
    b.embedding_row = weight_view_bytes(weights.embedding) / weights.embedding.rows;
  b.lm_head = weight_view_bytes(weights.lm_head);
  return b;
}

}  // namespace minimax
