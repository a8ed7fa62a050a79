// MXFP4 weights (32 e2m1 elements per e8m0 scale), f32 activations, in the shared even/odd order
// (even_odd_order, linear_internal.h). The 32 columns of a block are 16 bytes, the even columns in
// their low nibbles and the odd ones in their high nibbles, so a block's bytes widened to dwords
// index its even weights (low 4 bits) and, shifted right by 4, its odd ones in a 16-entry table
// of the e2m1 values times the block's scale, 2^(scale - 127) (0x00 -> 2^-127, 0xFF -> NaN, as
// formats/): every weight decodes exactly, as the reference does.
#define MINIMAX_AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,fma,f16c,bmi,bmi2"
#include <cstring>

#include "kernels/cpu/linear_avx2-inl.h"
#include "kernels/cpu/linear_avx512-inl.h"
#include "kernels/cpu/linear_fp4-inl.h"
#include "kernels/cpu/linear_fp8-inl.h"

namespace minimax::cpu_linear_detail {
namespace {

struct Mxfp4Avx512 {
  static constexpr int kChunkCols = 128, kVectors = 8, kGroups = 0;
  static constexpr bool kBf16X = false;
  using Vec = __m512;
  const uint8_t* data;
  const uint8_t* scales;
  int64_t row_bytes, scales_per_row;
  int64_t prefetch_ahead = prefetch_ahead_bytes(row_bytes);
  const float* e8m0;
  __m512 table;

  MINIMAX_AVX512 explicit Mxfp4Avx512(const WeightView& w)
      : data(w.data),
        scales(static_cast<const uint8_t*>(w.scales)),
        row_bytes(weight_data_stride(w)),
        scales_per_row(weight_scale_stride(w)),
        e8m0(decode_tables().e8m0),
        table(_mm512_load_ps(decode_tables().e2m1)) {}
  // Vectors 2b and 2b + 1: the even and odd columns of block b of the chunk.
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid,
                                                 __m512* w) const {
    const uint8_t* p = data + row * row_bytes + c * 64;
    prefetch512<kTail>(p, prefetch_ahead);
    const uint8_t* codes = scales + row * scales_per_row + c * 4;
#pragma GCC unroll 4
    for (int b = 0; b < 4; ++b) {
      if (kTail && 32 * b >= valid) {  // tails are whole blocks (cols % 32 == 0)
        w[2 * b] = w[2 * b + 1] = _mm512_setzero_ps();
        continue;
      }
      const __m512i bytes =
          _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * b)));
      const __m512 scaled = _mm512_mul_ps(table, _mm512_set1_ps(e8m0[codes[b]]));
      w[2 * b] = _mm512_permutexvar_ps(bytes, scaled);
      w[2 * b + 1] = _mm512_permutexvar_ps(_mm512_srli_epi32(bytes, 4), scaled);
    }
  }
  static constexpr int group(int) { return 0; }
  float row_scale(int64_t) const { return 1.0f; }
};

struct Mxfp4Avx2 {
  static constexpr int kChunkCols = 64, kVectors = 8, kGroups = 0;
  const uint8_t* data;
  const uint8_t* scales;
  int64_t row_bytes, scales_per_row;
  const float* e8m0;
  Fp4EvenOdd256 elements;

  MINIMAX_AVX2 explicit Mxfp4Avx2(const WeightView& w)
      : data(w.data),
        scales(static_cast<const uint8_t*>(w.scales)),
        row_bytes(weight_data_stride(w)),
        scales_per_row(weight_scale_stride(w)),
        e8m0(decode_tables().e8m0) {}
  // Vectors 4b .. 4b + 3: block b (the even and odd columns of its two 16-column groups), each
  // times the block's scale.
  template <bool kTail>
  MINIMAX_AVX2 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid, __m256* w) const {
    elements.decode<kTail>(data + row * row_bytes + c * 32, valid, w);
    const uint8_t* codes = scales + row * scales_per_row + c * 2;
    const __m256 first = _mm256_set1_ps(e8m0[codes[0]]);
    const __m256 second =
        !kTail || valid > 32 ? _mm256_set1_ps(e8m0[codes[1]]) : _mm256_setzero_ps();
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) {
      w[v] = _mm256_mul_ps(w[v], first);
      w[4 + v] = _mm256_mul_ps(w[4 + v], second);
    }
  }
  static constexpr int group(int) { return 0; }
  float row_scale(int64_t) const { return 1.0f; }
};

}  // namespace

RowKernel mxfp4_kernel(CpuIsa isa) {
  RowKernel k;
  if (isa == CpuIsa::kAvx512) {
    k.run = rows512<Mxfp4Avx512>;
    k.chunk_cols = Mxfp4Avx512::kChunkCols;
    k.order = even_odd_order<Mxfp4Avx512::kChunkCols, 32>();
  } else if (isa == CpuIsa::kAvx2) {
    k.run = rows256<Mxfp4Avx2>;
    k.chunk_cols = Mxfp4Avx2::kChunkCols;
    k.order = even_odd_order<Mxfp4Avx2::kChunkCols, 16>();
  }
  return k;
}

}  // namespace minimax::cpu_linear_detail
