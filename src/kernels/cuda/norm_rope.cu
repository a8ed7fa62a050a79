// CUDA RMSNorm (plain and Gemma 1 + w, whole rows or split across ranks) and NeoX partial RoPE
// (reference/norm_rope.cc): sums of squares in double, one block per row; the RoPE angle in the
// reference's f32 convention, its cosine and sine and the rotation in double.
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace minimax::cuda {
namespace {

constexpr int kThreads = 256;

__device__ double row_sum_squares(const float* x, int64_t dim) {
  double s = 0;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) s += double(x[i]) * x[i];
  return block_sum(s);
}

__device__ void scale_row(const float* x, int64_t dim, double inv, const float* weight,
                          bool add_one, float* out) {
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const double g = add_one ? 1.0 + weight[i] : double(weight[i]);
    out[i] = static_cast<float>(x[i] * inv * g);
  }
}

__global__ void rms_norm_kernel(const float* x, int64_t dim, const float* weight, float eps,
                                bool add_one, float* out) {
  const int64_t r = blockIdx.x;
  const double sum = row_sum_squares(x + r * dim, dim);
  scale_row(x + r * dim, dim, 1.0 / sqrt(sum / double(dim) + eps), weight, add_one,
            out + r * dim);
}

__global__ void sum_squares_kernel(const float* x, int64_t dim, float* out) {
  const int64_t r = blockIdx.x;
  const double sum = row_sum_squares(x + r * dim, dim);
  if (threadIdx.x == 0) out[r] = static_cast<float>(sum);
}

__global__ void rms_norm_from_sums_kernel(const float* x, int64_t dim, const float* sum_sq,
                                          int64_t full_dim, const float* weight, float eps,
                                          bool add_one, float* out) {
  const int64_t r = blockIdx.x;
  scale_row(x + r * dim, dim, 1.0 / sqrt(double(sum_sq[r]) / double(full_dim) + eps), weight,
            add_one, out + r * dim);
}

// One thread per (token, pair j, head).
__global__ void rope_kernel(float* x, int64_t T, const int32_t* positions, RopeParams p) {
  const int half = p.rotary_dim / 2;
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= T * half * p.num_heads) return;
  const int h = static_cast<int>(i % p.num_heads);
  const int j = static_cast<int>(i / p.num_heads % half);
  const int64_t t = i / (int64_t(p.num_heads) * half);
  const float exponent = static_cast<float>(2 * j) / static_cast<float>(p.rotary_dim);
  const float power =
      static_cast<float>(pow(double(static_cast<float>(p.theta)), double(exponent)));
  const float inv_freq = 1.0f / power;
  const double angle = static_cast<float>(positions[t]) * inv_freq;
  const double c = cos(angle), s = sin(angle);
  float* head = x + (t * p.num_heads + h) * p.head_dim;
  const double a = head[j], b = head[j + half];
  head[j] = static_cast<float>(a * c - b * s);
  head[j + half] = static_cast<float>(b * c + a * s);
}


}  // namespace

void rms_norm(const float* x, int64_t rows, int64_t dim, const float* weight, float eps,
              bool add_one, float* out, Stream s) {
  if (rows <= 0) return;
  rms_norm_kernel<<<unsigned(rows), kThreads, 0, as_stream(s)>>>(x, dim, weight, eps, add_one,
                                                                  out);
}

void sum_squares(const float* x, int64_t rows, int64_t dim, float* out, Stream s) {
  if (rows <= 0) return;
  sum_squares_kernel<<<unsigned(rows), kThreads, 0, as_stream(s)>>>(x, dim, out);
}

void rms_norm_from_sums(const float* x, int64_t rows, int64_t dim, const float* sum_sq,
                        int64_t full_dim, const float* weight, float eps, bool add_one,
                        float* out, Stream s) {
  if (rows <= 0) return;
  rms_norm_from_sums_kernel<<<unsigned(rows), kThreads, 0, as_stream(s)>>>(
      x, dim, sum_sq, full_dim, weight, eps, add_one, out);
}

void rope(float* x, int64_t T, const int32_t* positions, const RopeParams& p, Stream s) {
  const int64_t n = T * (p.rotary_dim / 2) * p.num_heads;
  if (n <= 0) return;
  rope_kernel<<<blocks_for(n, kThreads), kThreads, 0, as_stream(s)>>>(x, T, positions, p);
}

}  // namespace minimax::cuda
