// Reference RMSNorm (plain and Gemma (1 + w)) and NeoX partial RoPE.
#include <cmath>

#include "base/error.h"
#include "kernels/reference/reference_ops.h"

namespace minimax::reference {

void rms_norm(const float* x, int64_t rows, int64_t dim, const float* weight, float eps,
              bool add_one, float* out, ThreadPool* pool) {
  if (dim <= 0) fail("rms_norm: dim must be positive, got {}", dim);
  for_range(pool, rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* xr = x + r * dim;
      double sum_sq = 0;
      for (int64_t i = 0; i < dim; ++i) sum_sq += static_cast<double>(xr[i]) * xr[i];
      const double inv = 1.0 / std::sqrt(sum_sq / static_cast<double>(dim) + eps);
      float* o = out + r * dim;
      for (int64_t i = 0; i < dim; ++i) {
        const double g = add_one ? 1.0 + weight[i] : static_cast<double>(weight[i]);
        o[i] = static_cast<float>(xr[i] * inv * g);
      }
    }
  });
}

void sum_squares(const float* x, int64_t rows, int64_t dim, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum_sq = 0;
    for (int64_t i = 0; i < dim; ++i)
      sum_sq += static_cast<double>(x[r * dim + i]) * x[r * dim + i];
    out[r] = static_cast<float>(sum_sq);
  }
}

void rms_norm_from_sums(const float* x, int64_t rows, int64_t dim, const float* sum_sq,
                        int64_t full_dim, const float* weight, float eps, bool add_one,
                        float* out) {
  if (full_dim <= 0) fail("rms_norm_from_sums: full_dim must be positive, got {}", full_dim);
  for (int64_t r = 0; r < rows; ++r) {
    const double inv = 1.0 / std::sqrt(static_cast<double>(sum_sq[r]) / full_dim + eps);
    for (int64_t i = 0; i < dim; ++i) {
      const double g = add_one ? 1.0 + weight[i] : static_cast<double>(weight[i]);
      out[r * dim + i] = static_cast<float>(x[r * dim + i] * inv * g);
    }
  }
}

// HF `compute_default_rope_parameters` and vLLM's cos/sin cache work in f32:
// inv_freq = 1 / theta^(arange(0, r, 2) / r) in f32, angle = f32(position · inv_freq). At the
// positions of long contexts the f32 rounding of the angle is the dominant difference between
// implementations, so the reference reproduces it; cos and sin of that angle are exact here.
float rope_angle(int32_t position, int pair, int rotary_dim, double theta) {
  const float exponent = static_cast<float>(2 * pair) / static_cast<float>(rotary_dim);
  const float power = static_cast<float>(
      std::pow(static_cast<double>(static_cast<float>(theta)), static_cast<double>(exponent)));
  const float inv_freq = 1.0f / power;
  return static_cast<float>(position) * inv_freq;
}

void rope(float* x, int64_t T, const int32_t* positions, const RopeParams& p, ThreadPool* pool) {
  if (p.rotary_dim <= 0 || p.rotary_dim % 2 != 0 || p.rotary_dim > p.head_dim)
    fail("rope: rotary_dim {} must be even and within head_dim {}", p.rotary_dim, p.head_dim);
  const int half = p.rotary_dim / 2;
  for_range(pool, T, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      for (int j = 0; j < half; ++j) {
        const double angle = rope_angle(positions[t], j, p.rotary_dim, p.theta);
        const double c = std::cos(angle), s = std::sin(angle);
        for (int h = 0; h < p.num_heads; ++h) {
          float* head = x + (t * p.num_heads + h) * p.head_dim;
          const double a = head[j], b = head[j + half];
          head[j] = static_cast<float>(a * c - b * s);
          head[j + half] = static_cast<float>(b * c + a * s);
        }
      }
    }
  });
}

}  // namespace minimax::reference
