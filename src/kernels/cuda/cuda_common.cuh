// Device helpers shared by the CUDA kernels: element decoders (exactly the formats/ and kv_codec.h
// definitions), block reductions and the launch-size arithmetic.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kernels/ops.h"

namespace minimax::cuda {

inline cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

inline unsigned blocks_for(int64_t n, int threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

__host__ __device__ inline int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

// e4m3fn code -> value: (8 + m)·2^(e - 10) when normal, m·2^-9 when subnormal, NaN for S.1111.111.
__device__ inline float e4m3_value(uint8_t c) {
  const int e = (c >> 3) & 0xF, m = c & 7;
  if (e == 0xF && m == 7) return __int_as_float(0x7FC00000);
  const float v = e == 0 ? ldexpf(static_cast<float>(m), -9) : ldexpf(static_cast<float>(8 + m), e - 10);
  return (c & 0x80) ? -v : v;
}

__device__ inline float bf16_value(uint16_t bits) {
  return __int_as_float(static_cast<int>(static_cast<uint32_t>(bits) << 16));
}

// kv_codec.h: bf16 round to nearest even; e4m3fn of x / 1.0, round to nearest even, saturating at
// ±448, NaN -> 0x7F.
__device__ inline uint16_t bf16_bits(float x) {
  const __nv_bfloat16 b = __float2bfloat16_rn(x);
  return *reinterpret_cast<const uint16_t*>(&b);
}
__device__ inline uint8_t fp8_kv_code(float x) {
  return static_cast<uint8_t>(__nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
}

__device__ inline float kv_value(const void* base, KvDtype dtype, int64_t index) {
  switch (dtype) {
    case KvDtype::kF32:
      return static_cast<const float*>(base)[index];
    case KvDtype::kBF16:
      return bf16_value(static_cast<const uint16_t*>(base)[index]);
    case KvDtype::kFp8E4m3:
      return e4m3_value(static_cast<const uint8_t*>(base)[index]);
  }
  return 0.0f;
}

// Slot s of a paged cache: row page_table[s / page_size]·page_size + s % page_size; row s when the
// cache is not paged.
__device__ inline int64_t cache_row(const int32_t* page_table, int page_size, int64_t slot) {
  if (page_table == nullptr) return slot;
  return int64_t(page_table[slot / page_size]) * page_size + slot % page_size;
}

template <class T>
__device__ inline T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xFFFFFFFFu, v, offset);
  return v;
}
__device__ inline float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = fmaxf(v, __shfl_down_sync(0xFFFFFFFFu, v, offset));
  return v;
}

// Sum / max over the block (blockDim.x a multiple of 32, at most 1024); every thread gets it.
// `warp` reduces within a warp, `identity` fills the lanes of the second pass past the warps.
template <class T, T (*kWarp)(T)>
__device__ inline T block_reduce(T v, T identity) {
  __shared__ T partial[32];
  __shared__ T total;
  v = kWarp(v);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    T w = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : identity;
    w = kWarp(w);
    if (threadIdx.x == 0) total = w;
  }
  __syncthreads();
  const T result = total;
  __syncthreads();
  return result;
}
template <class T>
__device__ inline T block_sum(T v) {
  return block_reduce<T, warp_sum<T>>(v, T(0));
}
__device__ inline float block_max(float v) { return block_reduce<float, warp_max>(v, -INFINITY); }

}  // namespace minimax::cuda
