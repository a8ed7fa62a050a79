// CUDA residual add, row gather / scatter, the MoE slot combine, bf16 rounding, the gated
// activations, FP8 activation emulation and the router (reference/elementwise.cc, moe.cc,
// router.cc). The activations and the router compute in double, as the reference does.
#include <cfloat>

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace minimax::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void add_kernel(float* y, const float* x, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

// out row i = x row rows[i] (gather) or out row slots[i] = x row i (scatter).
__global__ void move_rows_kernel(const float* x, int64_t width, const int32_t* index,
                                 int64_t count, float* out, bool scatter) {
  for (int64_t i = blockIdx.y; i < count; i += gridDim.y) {  // grid.y is at most 65535
    const int64_t src = scatter ? i : index[i], dst = scatter ? index[i] : i;
    for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < width;
         c += int64_t(gridDim.x) * blockDim.x)
      out[dst * width + c] = x[src * width + c];
  }
}

__global__ void combine_kernel(const float* slot_out, const float* weights, int64_t T, int top_k,
                               int64_t H, float* y) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= T * H) return;
  const int64_t t = i / H, c = i % H;
  double acc = 0;
  for (int j = 0; j < top_k; ++j)
    acc += double(weights[t * top_k + j]) * slot_out[(t * top_k + j) * H + c];
  y[i] = static_cast<float>(acc);
}

__global__ void round_bf16_kernel(float* x, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = bf16_value(bf16_bits(x[i]));
}

__device__ double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

__global__ void glu_kernel(const float* gate, const float* up, int64_t n, GluParams p,
                           float* out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double g = gate[i], u = up[i];
  if (p.kind == GluKind::kSilu) {
    out[i] = static_cast<float>(g * sigmoid(g) * u);
  } else {
    const double limit = p.limit;
    const double gc = fmin(g, limit);
    const double uc = fmin(fmax(u, -limit), limit);
    out[i] = static_cast<float>(gc * sigmoid(p.alpha * gc) * (uc + p.beta));
  }
}

// x <- e4m3fn(x / scale)·scale for each group of `group` values of a row (one block per group);
// scale = amax / fp8_max, or `fixed` when positive. An all-zero group stays zero.
__global__ void fake_quant_kernel(float* x, int64_t rows, int64_t cols, int64_t group,
                                  float fp8_max, float fixed) {
  const int64_t groups_per_row = (cols + group - 1) / group;
  const int64_t r = blockIdx.x / groups_per_row, g = blockIdx.x % groups_per_row;
  if (r >= rows) return;
  float* v = x + r * cols + g * group;
  const int64_t n = min(group, cols - g * group);
  float scale = fixed;
  if (!(fixed > 0)) {
    float m = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, fabsf(v[i]));
    scale = block_max(m) / fp8_max;
  }
  if (!(scale > 0)) return;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const uint8_t code = static_cast<uint8_t>(
        __nv_cvt_float_to_fp8(v[i] / scale, __NV_SATFINITE, __NV_E4M3));
    v[i] = static_cast<float>(double(e4m3_value(code)) * scale);
  }
}

// One thread per token: top_k by score + bias (ties to the lower expert id), weights the unbiased
// sigmoid scores, renormalised, times routed_scale.
constexpr int kMaxExperts = 1024;
__global__ void route_kernel(RouterArgs a) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= a.T) return;
  const float* logits = a.logits + t * a.num_experts;
  uint32_t taken[kMaxExperts / 32] = {};
  double chosen_score[64];
  int chosen[64];
  double sum = 0;
  for (int j = 0; j < a.top_k; ++j) {
    int best = -1;
    double best_choice = -DBL_MAX, best_score = 0;
    for (int e = 0; e < a.num_experts; ++e) {
      if (taken[e / 32] & (1u << (e % 32))) continue;
      const double s = sigmoid(logits[e]);
      const double choice = s + (a.selection_bias ? double(a.selection_bias[e]) : 0.0);
      if (best < 0 || choice > best_choice) {
        best = e;
        best_choice = choice;
        best_score = s;
      }
    }
    taken[best / 32] |= 1u << (best % 32);
    chosen[j] = best;
    chosen_score[j] = best_score;
    sum += best_score;
  }
  for (int j = 0; j < a.top_k; ++j) {
    const double w = a.renormalize ? chosen_score[j] / sum : chosen_score[j];
    a.expert_ids[t * a.top_k + j] = chosen[j];
    a.expert_weights[t * a.top_k + j] = static_cast<float>(w * a.routed_scale);
  }
}

}  // namespace

void add(float* y, const float* x, int64_t n, Stream s) {
  if (n <= 0) return;
  add_kernel<<<blocks_for(n, kThreads), kThreads, 0, as_stream(s)>>>(y, x, n);
}

void gather_rows(const float* x, int64_t width, const int32_t* rows, int64_t count, float* out,
                 Stream s) {
  if (count <= 0 || width <= 0) return;
  const dim3 grid(std::min<unsigned>(blocks_for(width, kThreads), 64),
                  unsigned(std::min<int64_t>(count, 65535)));
  move_rows_kernel<<<grid, kThreads, 0, as_stream(s)>>>(x, width, rows, count, out, false);
}

void scatter_rows(const float* rows, int64_t width, const int32_t* slots, int64_t count,
                  float* out, Stream s) {
  if (count <= 0 || width <= 0) return;
  const dim3 grid(std::min<unsigned>(blocks_for(width, kThreads), 64),
                  unsigned(std::min<int64_t>(count, 65535)));
  move_rows_kernel<<<grid, kThreads, 0, as_stream(s)>>>(rows, width, slots, count, out, true);
}

void combine_slots(const float* slot_out, const float* weights, int64_t T, int top_k, int64_t H,
                   float* y, Stream s) {
  if (T * H <= 0) return;
  combine_kernel<<<blocks_for(T * H, kThreads), kThreads, 0, as_stream(s)>>>(slot_out, weights, T,
                                                                            top_k, H, y);
}

void round_to_bf16(float* x, int64_t n, Stream s) {
  if (n <= 0) return;
  round_bf16_kernel<<<blocks_for(n, kThreads), kThreads, 0, as_stream(s)>>>(x, n);
}

void glu(const float* gate, const float* up, int64_t n, const GluParams& p, float* out, Stream s) {
  if (n <= 0) return;
  glu_kernel<<<blocks_for(n, kThreads), kThreads, 0, as_stream(s)>>>(gate, up, n, p, out);
}

void quantize_activations(float* x, int64_t rows, int64_t cols, const ActQuant& q, Stream s) {
  if (q.kind == ActQuantKind::kNone || rows <= 0 || cols <= 0) return;
  int64_t group = cols, count_rows = rows, count_cols = cols;
  float fixed = 0;
  if (q.kind == ActQuantKind::kFp8Group) group = q.group;
  if (q.kind == ActQuantKind::kFp8FixedScale) {  // one scale for everything: one long row
    fixed = q.fixed_scale;
    count_rows = 1;
    count_cols = rows * cols;
    group = count_cols;
  }
  // A fixed scale needs no reduction: cut the one row into blocks of 64 Ki values.
  if (fixed > 0) group = std::min<int64_t>(group, int64_t{1} << 16);
  const int64_t blocks = count_rows * ((count_cols + group - 1) / group);
  fake_quant_kernel<<<unsigned(blocks), kThreads, 0, as_stream(s)>>>(x, count_rows, count_cols,
                                                                     group, q.fp8_max, fixed);
}

void route(const RouterArgs& a, Stream s) {
  if (a.T <= 0) return;
  route_kernel<<<blocks_for(a.T, 64), 64, 0, as_stream(s)>>>(a);
}

}  // namespace minimax::cuda
