// Activations as bf16 for the vdpbf16ps kernels (the row kernels' preparation, linear_prepare.cc,
// and the batch GEMM, linear_gemm.cc): 32 f32 values rounded to bf16 at once, and the lo halves
// of split activations (ActivationPrecision::kBF16x2). Included only by .cc files whose targets
// include AVX-512 F, BW, VL and BF16.
#pragma once

#include <immintrin.h>

#include <cstdint>

#define MINIMAX_BF16_SPLIT \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"), always_inline)) inline

namespace minimax::cpu_linear_detail {
namespace {

// a (values 0-15) and b (16-31) rounded to bf16, nearest even, subnormals as zero (as vdpbf16ps
// reads them anyway): words 0-31 in order.
MINIMAX_BF16_SPLIT __m512i round_bf16_32(__m512 a, __m512 b) {
  return (__m512i)_mm512_cvtne2ps_pbh(b, a);
}

// The lo halves bf16(x - hi) of the same 32 values, hi = round_bf16_32(a, b): hi + lo is within
// 2^-16 of x. lo is 0 where hi is infinite (x infinite or past bf16's largest finite value), not
// inf - inf = NaN.
MINIMAX_BF16_SPLIT __m512i lo_bf16_32(__m512 a, __m512 b, __m512i hi) {
  // The hi words back to f32: word i to dword i of ha (a's half) and hb (b's half).
  const __m512 ha =
      _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(hi)), 16));
  const __m512 hb = _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(hi, 1)), 16));
  const __m512i lo = round_bf16_32(_mm512_sub_ps(a, ha), _mm512_sub_ps(b, hb));
  const __mmask32 infinite = _mm512_cmpeq_epi16_mask(
      _mm512_and_si512(hi, _mm512_set1_epi16(0x7FFF)), _mm512_set1_epi16(0x7F80));
  return _mm512_mask_mov_epi16(lo, infinite, _mm512_setzero_si512());
}

// x [n, cols] f32 -> out [n, stride] bf16 (stride a multiple of 32, out 64-byte aligned) (round to nearest even; subnormals become 0, as
// vdpbf16ps would read them), each column times col_scale[c] when given, zero-padded. kSplit:
// out holds the hi halves and out + lo_offset the lo halves, bf16(v - hi) (0 where hi is
// infinite).
template <bool kSplit>
MINIMAX_BF16_SPLIT void to_bf16_rows(const float* x, int64_t n, int64_t cols, int64_t stride,
                                 const float* col_scale, uint16_t* out, int64_t lo_offset) {
  const auto first = [](int64_t k) {
    return k >= 16 ? __mmask16(0xFFFF) : k <= 0 ? __mmask16(0) : __mmask16((1u << k) - 1);
  };
  for (int64_t t = 0; t < n; ++t) {
    const float* xt = x + t * cols;
    uint16_t* ot = out + t * stride;
    for (int64_t c = 0; c < stride; c += 32) {
      const __mmask16 m0 = first(cols - c), m1 = first(cols - c - 16);
      __m512 lo = _mm512_maskz_loadu_ps(m0, xt + c), hi = _mm512_maskz_loadu_ps(m1, xt + c + 16);
      if (col_scale != nullptr) {
        lo = _mm512_mul_ps(lo, _mm512_maskz_loadu_ps(m0, col_scale + c));
        hi = _mm512_mul_ps(hi, _mm512_maskz_loadu_ps(m1, col_scale + c + 16));
      }
      const __m512i h = round_bf16_32(lo, hi);
      _mm512_store_si512(ot + c, h);
      if constexpr (kSplit) _mm512_store_si512(ot + lo_offset + c, lo_bf16_32(lo, hi, h));
    }
  }
}

}  // namespace
}  // namespace minimax::cpu_linear_detail
