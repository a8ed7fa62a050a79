// f32 weights: one vector of weights per vector of activations, natural column order.
#define MINIMAX_AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,fma,f16c,bmi,bmi2"
#include "kernels/cpu/linear_avx2-inl.h"
#include "kernels/cpu/linear_avx512-inl.h"

namespace minimax::cpu_linear_detail {
namespace {

struct F32Avx512 {
  static constexpr RowsApart kRowsApart = RowsApart::kNo;  // see rows_apart
  static constexpr int kChunkCols = 16, kVectors = 1, kGroups = 0;
  static constexpr bool kBf16X = false;
  using Vec = __m512;
  const float* data;
  int64_t stride;  // floats from one row to the next
  int64_t prefetch_ahead = prefetch_ahead_bytes(stride * 4);

  MINIMAX_AVX512 explicit F32Avx512(const WeightView& w)
      : data(reinterpret_cast<const float*>(w.data)), stride(weight_data_stride(w) / 4) {}
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid,
                                                 __m512* w) const {
    const float* p = data + row * stride + c * kChunkCols;
    prefetch512<kTail>(p, prefetch_ahead);
    w[0] = kTail ? _mm512_maskz_loadu_ps(static_cast<__mmask16>(first_bytes(valid)), p)
                 : _mm512_loadu_ps(p);
  }
  static constexpr int group(int) { return 0; }
  float row_scale(int64_t) const { return 1.0f; }
};

struct F32Avx2 {
  static constexpr RowsApart kRowsApart = RowsApart::kNo;  // see rows_apart
  static constexpr int kChunkCols = 8, kVectors = 1, kGroups = 0;
  const float* data;
  int64_t stride;  // floats from one row to the next

  MINIMAX_AVX2 explicit F32Avx2(const WeightView& w)
      : data(reinterpret_cast<const float*>(w.data)), stride(weight_data_stride(w) / 4) {}
  template <bool kTail>
  MINIMAX_AVX2 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid, __m256* w) const {
    const float* p = data + row * stride + c * kChunkCols;
    prefetch256<kTail>(p);
    if constexpr (kTail) {
      // vmaskmovps does not touch the masked-off elements, so it cannot fault past the row.
      const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
      w[0] = _mm256_maskload_ps(p, _mm256_cmpgt_epi32(_mm256_set1_epi32(valid), lane));
    } else {
      w[0] = _mm256_loadu_ps(p);
    }
  }
  static constexpr int group(int) { return 0; }
  float row_scale(int64_t) const { return 1.0f; }
};

}  // namespace

RowKernel f32_kernel(CpuIsa isa) {
  RowKernel k;
  if (isa == CpuIsa::kAvx512) {
    k.run = rows512<F32Avx512>;
    k.chunk_cols = F32Avx512::kChunkCols;
  } else if (isa == CpuIsa::kAvx2) {
    k.run = rows256<F32Avx2>;
    k.chunk_cols = F32Avx2::kChunkCols;
  }
  return k;
}

}  // namespace minimax::cpu_linear_detail
