// CPU residual add, embedding, RMSNorm, RoPE and gated activations (the router is router_cpu.cc):
// plain loops arranged so that the per-call constants (inverse frequencies, cos/sin, the inverse
// RMS) are computed once, threads take whole rows of large calls, and nothing is allocated per call
// once scratch has grown.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "formats/float_formats.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/reference/reference_ops.h"
#include "kernels/reference/weight_rows.h"

namespace minimax {
namespace {

// Elements below which a call stays on the calling thread (waking the pool costs more).
constexpr int64_t kMinParallelElements = 1 << 16;

// fn(begin, end) over [0, rows), split across `pool` when the call is large enough.
template <class Fn>
void for_rows(ThreadPool* pool, int64_t rows, int64_t elements_per_row, const Fn& fn) {
  if (rows <= 0) return;
  if (pool == nullptr || pool->size() == 1 || rows == 1 ||
      rows * elements_per_row < kMinParallelElements) {
    fn(int64_t{0}, rows);
    return;
  }
  const Fn* body = &fn;
  pool->parallel_for(static_cast<size_t>(rows), [body](size_t begin, size_t end, size_t) {
    (*body)(static_cast<int64_t>(begin), static_cast<int64_t>(end));
  });
}

}  // namespace

void cpu_add(float* y, const float* x, int64_t n, ThreadPool* pool) {
  // Split in chunks of 4096 values so that small calls (a decode step's residual) stay inline.
  constexpr int64_t kChunk = 4096;
  for_rows(pool, (n + kChunk - 1) / kChunk, kChunk, [&](int64_t begin, int64_t end) {
    const int64_t stop = std::min(n, end * kChunk);
    for (int64_t i = begin * kChunk; i < stop; ++i) y[i] += x[i];
  });
}

void cpu_embedding(const WeightView& table, const int32_t* tokens, int64_t T, float* out) {
  reference::check_weight_view(table, "embedding");
  const int64_t cols = table.cols;
  for (int64_t t = 0; t < T; ++t) {
    if (tokens[t] < 0 || tokens[t] >= table.rows)
      fail("embedding: token id {} at position {} is outside the vocabulary [0, {})", tokens[t], t,
           table.rows);
    float* o = out + t * cols;
    const int64_t row = tokens[t];
    if (table.format == WeightFormat::kF32) {
      std::memcpy(o, table.data + row * weight_data_stride(table), static_cast<size_t>(cols) * 4);
    } else if (table.format == WeightFormat::kBF16) {
      const uint8_t* src = table.data + row * weight_data_stride(table);
      for (int64_t c = 0; c < cols; ++c) {
        uint16_t bits;
        std::memcpy(&bits, src + 2 * c, 2);
        o[c] = bf16_to_f32(bits);
      }
    } else {
      reference::decode_row(table, row, o);  // exact, one row per token
    }
  }
}

namespace cpu_ops_detail {
// elementwise_avx512.cc
void glu_avx512(const float* gate, const float* up, int64_t n, const GluParams& p, float* out);
void rms_norm_row_avx512(const float* x, int64_t dim, const float* weight, float eps, bool add_one,
                         float* out);
}  // namespace cpu_ops_detail

void cpu_rms_norm(const float* x, int64_t rows, int64_t dim, const float* weight, float eps,
                  bool add_one, float* out, ThreadPool* pool) {
  cpu_rms_norm_at(x, rows, dim, weight, eps, add_one, out, pool, default_cpu_isa());
}

void cpu_rms_norm_at(const float* x, int64_t rows, int64_t dim, const float* weight, float eps,
                     bool add_one, float* out, ThreadPool* pool, CpuIsa isa) {
  if (dim <= 0) fail("rms_norm: dim must be positive, got {}", dim);
  if (!cpu_supports(isa)) fail("rms_norm: this CPU does not support {}", cpu_isa_name(isa));
  for_rows(pool, rows, dim, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * dim;
      if (isa == CpuIsa::kAvx512) {
        cpu_ops_detail::rms_norm_row_avx512(xr, dim, weight, eps, add_one, out + r * dim);
        continue;
      }
      // Eight independent double sums: the squares of f32 values are exact in double, and the
      // chains are short enough to pipeline.
      double part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      int64_t i = 0;
      for (; i + 8 <= dim; i += 8)
        for (int k = 0; k < 8; ++k) part[k] += static_cast<double>(xr[i + k]) * xr[i + k];
      for (; i < dim; ++i) part[i % 8] += static_cast<double>(xr[i]) * xr[i];
      const double sum_sq =
          ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
      const double inv = 1.0 / std::sqrt(sum_sq / static_cast<double>(dim) + eps);
      float* o = out + r * dim;
      if (add_one) {
        for (int64_t c = 0; c < dim; ++c)
          o[c] = static_cast<float>(xr[c] * inv * (1.0 + weight[c]));
      } else {
        for (int64_t c = 0; c < dim; ++c)
          o[c] = static_cast<float>(xr[c] * inv * static_cast<double>(weight[c]));
      }
    }
  });
}

void cpu_rope(float* x, int64_t T, const int32_t* positions, const RopeParams& p,
              ThreadPool* pool) {
  if (p.rotary_dim <= 0 || p.rotary_dim % 2 != 0 || p.rotary_dim > p.head_dim)
    fail("rope: rotary_dim {} must be even and within head_dim {}", p.rotary_dim, p.head_dim);
  const int half = p.rotary_dim / 2;
  // inv_freq[j] is the reference's f32 angle at position 1 (1 · inv_freq is exact in f32).
  thread_local std::vector<float> inv_freq;
  inv_freq.resize(half);
  for (int j = 0; j < half; ++j) inv_freq[j] = reference::rope_angle(1, j, p.rotary_dim, p.theta);
  const float* freq = inv_freq.data();
  for_rows(pool, T, int64_t{p.num_heads} * p.rotary_dim, [&](int64_t begin, int64_t end) {
    thread_local std::vector<double> cos_sin;
    cos_sin.resize(2 * half);
    for (int64_t t = begin; t < end; ++t) {
      const float position = static_cast<float>(positions[t]);
      for (int j = 0; j < half; ++j) {
        const double angle = position * freq[j];  // the f32 product, as reference::rope_angle
        cos_sin[2 * j] = std::cos(angle);
        cos_sin[2 * j + 1] = std::sin(angle);
      }
      for (int h = 0; h < p.num_heads; ++h) {
        float* head = x + (t * p.num_heads + h) * p.head_dim;
        for (int j = 0; j < half; ++j) {
          const double c = cos_sin[2 * j], s = cos_sin[2 * j + 1];
          const double a = head[j], b = head[j + half];
          head[j] = static_cast<float>(a * c - b * s);
          head[j + half] = static_cast<float>(b * c + a * s);
        }
      }
    }
  });
}

void cpu_glu(const float* gate, const float* up, int64_t n, const GluParams& p, float* out) {
  cpu_glu_at(gate, up, n, p, out, default_cpu_isa());
}

void cpu_glu_at(const float* gate, const float* up, int64_t n, const GluParams& p, float* out,
                CpuIsa isa) {
  if (!cpu_supports(isa)) fail("glu: this CPU does not support {}", cpu_isa_name(isa));
  if (isa == CpuIsa::kAvx512) return cpu_ops_detail::glu_avx512(gate, up, n, p, out);
  if (p.kind == GluKind::kSilu) {
    for (int64_t i = 0; i < n; ++i) {
      const float g = gate[i];
      out[i] = g / (1.0f + std::exp(-g)) * up[i];
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], p.limit);
    const float u = std::clamp(up[i], -p.limit, p.limit);
    out[i] = g / (1.0f + std::exp(-p.alpha * g)) * (u + p.beta);
  }
}

}  // namespace minimax
