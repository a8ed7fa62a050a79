// Element-wise ops on AVX-512 (cpu_glu, cpu_rms_norm; elementwise_cpu.cc dispatches).
//
// Gated activations: eight lanes of double per step, so each output is the exact product rounded
// once to f32 (plus ~1e-15 relative from the exponential), well inside the few f32 roundings the
// scalar loop spends. The scalar loop's expf was ~4% of a 512-token prefill (perf, fp8-block bench
// shape); this takes 0.33-0.45 of its time per element (SiLU 1.6-1.9 against 3.9-6.0 ns,
// SwiGLU-OAI 1.9-2.6 against 4.8-7.7, 98,304 elements, the Xeon VM). Replacing the division by
// vrcp14pd and two Newton steps measured no faster.
//
// RMSNorm rows: the portable loop's arithmetic lane for lane (its eight double partial sums are
// the eight lanes; squares of f32 values are exact in double, so a fused multiply-add rounds as
// its add did), so the results are the same bits.
#define MINIMAX_SIMD_LEVEL 2  // simd_vec-inl.h: the AVX-512 target attribute (MINIMAX_SIMD)
#include <immintrin.h>

#include <cmath>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/simd_vec-inl.h"

namespace minimax::cpu_ops_detail {
namespace {

// e^x in double: x = n·ln2 + r with |r| ≤ ln2/2 (ln2 in two parts, so r is exact to ~2^-60),
// e^r by its Taylor series to r^12/12! (relative error below 1e-15), times 2^n by vscalefpd. x is
// first clamped to ±750, past the double range both ways, so that the reduction stays exact and
// the result is inf or 0 there (vmaxpd / vminpd return their second operand, x, when it is NaN).
MINIMAX_SIMD_INLINE __m512d exp_pd(__m512d x) {
  x = _mm512_min_pd(_mm512_set1_pd(750.0), _mm512_max_pd(_mm512_set1_pd(-750.0), x));
  const __m512d n = _mm512_roundscale_pd(_mm512_mul_pd(x, _mm512_set1_pd(1.4426950408889634)),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512d r = _mm512_fnmadd_pd(n, _mm512_set1_pd(6.93147180369123816490e-01), x);
  r = _mm512_fnmadd_pd(n, _mm512_set1_pd(1.90821492927058770002e-10), r);
  // Horner from 1/12! down to 1.
  constexpr double kInverseFactorial[13] = {1.0,
                                            1.0,
                                            1.0 / 2,
                                            1.0 / 6,
                                            1.0 / 24,
                                            1.0 / 120,
                                            1.0 / 720,
                                            1.0 / 5040,
                                            1.0 / 40320,
                                            1.0 / 362880,
                                            1.0 / 3628800,
                                            1.0 / 39916800,
                                            1.0 / 479001600};
  __m512d p = _mm512_set1_pd(kInverseFactorial[12]);
#pragma GCC unroll 12
  for (int k = 11; k >= 0; --k) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(kInverseFactorial[k]));
  return _mm512_scalef_pd(p, n);
}

// The first min(left, 8) of eight lanes (left > 0).
inline __mmask8 first_lanes(int64_t left) {
  return left >= 8 ? __mmask8{0xFF} : static_cast<__mmask8>((1u << left) - 1);
}

// act(gate, up) for 8 values (kOai: SwiGLU-OAI with its clamps, else SiLU).
template <bool kOai>
MINIMAX_SIMD_INLINE __m256 glu8(__m256 gate, __m256 up, const GluParams& p) {
  __m512d g = _mm512_cvtps_pd(gate), u = _mm512_cvtps_pd(up);
  __m512d arg = g;
  if constexpr (kOai) {
    // min / clamp as std::min and std::clamp do it: a NaN gate or up stays NaN (vminpd and
    // vmaxpd return their second operand when either is NaN).
    const __m512d limit = _mm512_set1_pd(p.limit);
    g = _mm512_min_pd(limit, g);
    u = _mm512_min_pd(limit, _mm512_max_pd(_mm512_set1_pd(-static_cast<double>(p.limit)), u));
    u = _mm512_add_pd(u, _mm512_set1_pd(p.beta));
    arg = _mm512_mul_pd(_mm512_set1_pd(p.alpha), g);
  }
  const __m512d e = exp_pd(_mm512_sub_pd(_mm512_setzero_pd(), arg));
  const __m512d s = _mm512_div_pd(g, _mm512_add_pd(_mm512_set1_pd(1.0), e));
  return _mm512_cvtpd_ps(_mm512_mul_pd(s, u));
}

template <bool kOai>
MINIMAX_SIMD void glu_loop(const float* gate, const float* up, int64_t n, const GluParams& p,
                           float* out) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, glu8<kOai>(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i), p));
  if (i < n) {
    const __mmask8 m = first_lanes(n - i);
    _mm256_mask_storeu_ps(
        out + i, m,
        glu8<kOai>(_mm256_maskz_loadu_ps(m, gate + i), _mm256_maskz_loadu_ps(m, up + i), p));
  }
}

}  // namespace

MINIMAX_SIMD void rms_norm_row_avx512(const float* x, int64_t dim, const float* weight, float eps,
                                      bool add_one, float* out) {
  __m512d acc = _mm512_setzero_pd();
  int64_t i = 0;
  for (; i + 8 <= dim; i += 8) {
    const __m512d v = _mm512_cvtps_pd(_mm256_loadu_ps(x + i));
    acc = _mm512_fmadd_pd(v, v, acc);
  }
  if (i < dim) {  // element i + j into lane j, as the portable loop's part[i % 8]
    const __mmask8 m = first_lanes(dim - i);
    const __m512d v = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, x + i));
    acc = _mm512_fmadd_pd(v, v, acc);
  }
  alignas(64) double part[8];
  _mm512_store_pd(part, acc);
  const double sum_sq =
      ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  const __m512d inv = _mm512_set1_pd(1.0 / std::sqrt(sum_sq / static_cast<double>(dim) + eps));
  for (int64_t c = 0; c < dim; c += 8) {
    const __mmask8 m = first_lanes(dim - c);
    const __m512d xv = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, x + c));
    __m512d wv = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, weight + c));
    if (add_one) wv = _mm512_add_pd(_mm512_set1_pd(1.0), wv);
    _mm256_mask_storeu_ps(out + c, m, _mm512_cvtpd_ps(_mm512_mul_pd(_mm512_mul_pd(xv, inv), wv)));
  }
}

void glu_avx512(const float* gate, const float* up, int64_t n, const GluParams& p, float* out) {
  if (p.kind == GluKind::kSilu) return glu_loop<false>(gate, up, n, p, out);
  glu_loop<true>(gate, up, n, p, out);
}

}  // namespace minimax::cpu_ops_detail
