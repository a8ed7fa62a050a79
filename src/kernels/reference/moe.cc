// Reference gated activations, FP8 activation emulation and grouped MoE (the router is in
// router.cc).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "base/error.h"
#include "formats/float_formats.h"
#include "kernels/reference/moe_plan.h"
#include "kernels/reference/reference_ops.h"

namespace minimax::reference {
namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

float round_bf16(float v) { return bf16_to_f32(f32_to_bf16(v)); }

// x ← e4m3fn(x / scale) · scale, in f32 as an FP8 GEMM's input would be.
void fake_quant(float* x, int64_t n, float scale) {
  if (!(scale > 0)) return;  // an all-zero group stays zero
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t code = f64_to_fp8(static_cast<double>(x[i] / scale), Fp8Format::kE4M3FN);
    x[i] = static_cast<float>(fp8_to_f64(code, Fp8Format::kE4M3FN) * scale);
  }
}

float amax(const float* x, int64_t n) {
  float m = 0;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}

}  // namespace

void glu(const float* gate, const float* up, int64_t n, const GluParams& p, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const double g = gate[i], u = up[i];
    if (p.kind == GluKind::kSilu) {
      out[i] = static_cast<float>(g * sigmoid(g) * u);
    } else {
      const double gc = std::min(g, static_cast<double>(p.limit));
      const double uc = std::clamp(u, -static_cast<double>(p.limit), static_cast<double>(p.limit));
      out[i] = static_cast<float>(gc * sigmoid(p.alpha * gc) * (uc + p.beta));
    }
  }
}

void quantize_activations(float* x, int64_t rows, int64_t cols, const ActQuant& q) {
  switch (q.kind) {
    case ActQuantKind::kNone:
      return;
    case ActQuantKind::kFp8PerToken:
      for (int64_t r = 0; r < rows; ++r)
        fake_quant(x + r * cols, cols, amax(x + r * cols, cols) / q.fp8_max);
      return;
    case ActQuantKind::kFp8Group:
      if (q.group <= 0) fail("activation quantization: group size {} must be positive", q.group);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; c += q.group) {
          float* g = x + r * cols + c;
          const int64_t n = std::min<int64_t>(q.group, cols - c);
          fake_quant(g, n, amax(g, n) / q.fp8_max);
        }
      }
      return;
    case ActQuantKind::kFp8FixedScale:
      if (!(q.fixed_scale > 0))
        fail("activation quantization: fixed scale {} must be positive", q.fixed_scale);
      fake_quant(x, rows * cols, q.fixed_scale);
      return;
  }
}

void moe(const MoeArgs& a, ThreadPool* pool) {
  const MoePlan plan = plan_moe(a.expert_ids, a.expert_weights, a.T, a.top_k, a.num_experts,
                                a.expert_begin, a.expert_end);
  const int64_t H = a.hidden, I = a.inter;
  // Each assignment's expert output lands in its router slot, then every token sums its slots in
  // slot order: the result does not depend on how experts are spread over threads.
  std::vector<float> slot_out(a.T * a.top_k * H, 0.0f);
  for_range(pool, static_cast<int64_t>(plan.active.size()), [&](int64_t begin, int64_t end) {
    std::vector<float> xs, gate, up, down;
    for (int64_t i = begin; i < end; ++i) {
      const int e = plan.active[i];
      const ExpertWeights& w = a.experts[e];
      if (w.gate.rows != I || w.gate.cols != H || w.up.rows != I || w.up.cols != H ||
          w.down.rows != H || w.down.cols != I)
        fail(
            "moe: expert {} weights are gate [{}, {}], up [{}, {}], down [{}, {}]; expected "
            "[{}, {}], [{}, {}], [{}, {}]",
            e, w.gate.rows, w.gate.cols, w.up.rows, w.up.cols, w.down.rows, w.down.cols, I, H, I, H,
            H, I);
      const int64_t n = plan.count(e), first = plan.offsets[e];
      xs.resize(n * H);
      for (int64_t k = 0; k < n; ++k)
        std::copy_n(a.x + int64_t(plan.tokens[first + k]) * H, H, xs.data() + k * H);
      if (a.bf16_activations)
        for (float& v : xs) v = round_bf16(v);
      gate.resize(n * I);
      up.resize(n * I);
      linear(w.gate, xs.data(), n, gate.data(), nullptr);
      linear(w.up, xs.data(), n, up.data(), nullptr);
      if (a.bf16_activations) {
        for (float& v : gate) v = round_bf16(v);
        for (float& v : up) v = round_bf16(v);
      }
      glu(gate.data(), up.data(), n * I, a.act, gate.data());
      if (a.bf16_activations)
        for (float& v : gate) v = round_bf16(v);
      quantize_activations(gate.data(), n, I, a.down_input_quant);
      down.resize(n * H);
      linear(w.down, gate.data(), n, down.data(), nullptr);
      if (a.bf16_activations)
        for (float& v : down) v = round_bf16(v);
      for (int64_t k = 0; k < n; ++k)
        std::copy_n(down.data() + k * H, H, slot_out.data() + int64_t(plan.slots[first + k]) * H);
    }
  });
  for (int64_t t = 0; t < a.T; ++t) {
    for (int64_t c = 0; c < H; ++c) {
      double acc = 0;
      for (int j = 0; j < a.top_k; ++j)
        acc += static_cast<double>(a.expert_weights[t * a.top_k + j]) *
               slot_out[(t * a.top_k + j) * H + c];
      a.y[t * H + c] = static_cast<float>(acc);
    }
  }
}

}  // namespace minimax::reference
