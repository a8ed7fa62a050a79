// MXFP4 weights (32 e2m1 elements per e8m0 scale), f32 activations. The elements decode exactly
// to f32 (linear_fp4-inl.h); each chunk's partial sums are multiplied per 32-element block by
// 2^(scale - 127), built from the scale byte's bits (0x00 -> 2^-127, 0xFF -> NaN, as formats/).
#define MINIMAX_AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,fma,f16c,bmi,bmi2"
#include <cstring>

#include "kernels/cpu/linear_avx2-inl.h"
#include "kernels/cpu/linear_avx512-inl.h"
#include "kernels/cpu/linear_fp4-inl.h"
#include "kernels/cpu/linear_fp8-inl.h"

namespace minimax::cpu_linear_detail {
namespace {

struct Mxfp4Avx512 {
  static constexpr int kChunkCols = 128, kVectors = 8, kGroups = 1;
  static constexpr bool kBf16X = false;
  using Vec = __m512;
  const uint8_t* data;
  const uint8_t* scales;
  int64_t row_bytes, scales_per_row;
  Fp4Elements512 elements;

  MINIMAX_AVX512 explicit Mxfp4Avx512(const WeightView& w)
      : data(w.data),
        scales(static_cast<const uint8_t*>(w.scales)),
        row_bytes(weight_data_stride(w)),
        scales_per_row(weight_scale_stride(w)) {}
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid,
                                                 __m512* w) const {
    elements.decode<kTail>(data + row * row_bytes + c * 64, row_bytes, valid, w);
  }
  static constexpr int group(int) { return 0; }
  // Dword j of every vector holds a column of block j / 4.
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void chunk_scales(int64_t row, int64_t c, int valid,
                                                         __m512* s) const {
    s[0] = mxfp4_scales512(scales + row * scales_per_row + c * 4,
                           kTail ? static_cast<size_t>(valid / 32) : 4);
  }
  float row_scale(int64_t) const { return 1.0f; }
};

struct Mxfp4Avx2 {
  static constexpr int kChunkCols = 64, kVectors = 8, kGroups = 1;
  const uint8_t* data;
  const uint8_t* scales;
  int64_t row_bytes, scales_per_row;
  const float* e8m0;
  Fp4Elements256 elements;

  MINIMAX_AVX2 explicit Mxfp4Avx2(const WeightView& w)
      : data(w.data),
        scales(static_cast<const uint8_t*>(w.scales)),
        row_bytes(weight_data_stride(w)),
        scales_per_row(weight_scale_stride(w)),
        e8m0(decode_tables().e8m0) {}
  template <bool kTail>
  MINIMAX_AVX2 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid, __m256* w) const {
    elements.decode<kTail>(data + row * row_bytes + c * 32, valid, w);
  }
  static constexpr int group(int) { return 0; }
  // Lane L holds the columns of block L of the chunk.
  template <bool kTail>
  MINIMAX_AVX2 MINIMAX_ALWAYS_INLINE void chunk_scales(int64_t row, int64_t c, int valid,
                                                       __m256* s) const {
    const uint8_t* codes = scales + row * scales_per_row + c * 2;
    const float second = !kTail || valid > 32 ? e8m0[codes[1]] : 0.0f;
    s[0] = _mm256_setr_m128(_mm_set1_ps(e8m0[codes[0]]), _mm_set1_ps(second));
  }
  float row_scale(int64_t) const { return 1.0f; }
};

}  // namespace

RowKernel mxfp4_kernel(CpuIsa isa) {
  RowKernel k;
  if (isa == CpuIsa::kAvx512) {
    k.run = rows512<Mxfp4Avx512>;
    k.chunk_cols = Mxfp4Avx512::kChunkCols;
    k.order = fp4_order_avx512();
  } else if (isa == CpuIsa::kAvx2) {
    k.run = rows256<Mxfp4Avx2>;
    k.chunk_cols = Mxfp4Avx2::kChunkCols;
    k.order = fp4_order_avx2();
  }
  return k;
}

}  // namespace minimax::cpu_linear_detail
