// CUDA linear and embedding for f32, bf16 and FP8 (e4m3fn per tile or per row) weights
// (reference/linear.cc): one warp per weight row and up to kTokens tokens, each weight decoded
// once per warp pass (value = code · scale, rounded once to f32, as the reference decodes), f32
// products summed per lane, then across the warp. A first, plain version: cuBLASLt GEMMs for
// prefill are the next step (docs/cuda.md).
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace minimax::cuda {
namespace {

constexpr int kTokens = 8;
constexpr int kWarps = 4;  // rows per block

__device__ inline float weight_at(const DeviceWeight& w, int64_t row, int64_t col) {
  const uint8_t* r = w.data + row * w.data_stride;
  switch (w.format) {
    case WeightFormat::kF32:
      return reinterpret_cast<const float*>(r)[col];
    case WeightFormat::kBF16:
      return bf16_value(reinterpret_cast<const uint16_t*>(r)[col]);
    case WeightFormat::kFp8Channel:
      return e4m3_value(r[col]) * w.scales[row];
    case WeightFormat::kFp8Block:
      return e4m3_value(r[col]) *
             w.scales[(row / w.block_rows) * w.scale_stride_floats + col / w.block_cols];
    default:
      return __int_as_float(0x7FC00000);  // refused on the host before any launch
  }
}

__global__ void linear_kernel(DeviceWeight w, int64_t rows, int64_t cols, const float* x,
                              int64_t T, float* y) {
  const int lane = threadIdx.x % 32;
  const int64_t row = int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  const int64_t t0 = int64_t(blockIdx.y) * kTokens;
  if (row >= rows) return;
  const int n = static_cast<int>(min_i64(kTokens, T - t0));
  float acc[kTokens] = {};
  for (int64_t c = lane; c < cols; c += 32) {
    const float wv = weight_at(w, row, c);
#pragma unroll
    for (int k = 0; k < kTokens; ++k)
      if (k < n) acc[k] = fmaf(wv, x[(t0 + k) * cols + c], acc[k]);
  }
#pragma unroll
  for (int k = 0; k < kTokens; ++k) {
    const float total = warp_sum(acc[k]);
    if (lane == 0 && k < n) y[(t0 + k) * rows + row] = total;
  }
}

__global__ void embedding_kernel(DeviceWeight w, int64_t cols, const int32_t* tokens, int64_t T,
                                 float* out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= T * cols) return;
  out[i] = weight_at(w, tokens[i / cols], i % cols);
}

}  // namespace

bool linear_supports(WeightFormat f) {
  return f == WeightFormat::kF32 || f == WeightFormat::kBF16 || f == WeightFormat::kFp8Block ||
         f == WeightFormat::kFp8Channel;
}

void linear(const DeviceWeight& w, const float* x, int64_t T, float* y, Stream s) {
  if (T <= 0 || w.rows <= 0) return;
  const dim3 grid(blocks_for(w.rows, kWarps), blocks_for(T, kTokens));
  linear_kernel<<<grid, kWarps * 32, 0, as_stream(s)>>>(w, w.rows, w.cols, x, T, y);
}

void embedding(const DeviceWeight& table, const int32_t* tokens, int64_t T, float* out,
               Stream s) {
  const int64_t n = T * table.cols;
  if (n <= 0) return;
  embedding_kernel<<<blocks_for(n, 256), 256, 0, as_stream(s)>>>(table, table.cols, tokens, T,
                                                                  out);
}

}  // namespace minimax::cuda
