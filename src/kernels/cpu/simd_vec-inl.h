// Small f32 and f64 vector types for the CPU attention kernels, one definition per ISA level:
// the including .cc file defines MINIMAX_SIMD_LEVEL (0 portable, 1 AVX2, 2 AVX-512) first, and
// every function here carries that level's target attribute (MINIMAX_SIMD), so the template
// kernels written against VecF / VecD compile once per level and no wide instruction leaks into
// code that runs before the CPU check. Internal linkage throughout.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/cpu/gcc12_avx512_warnings-inl.h"

#ifndef MINIMAX_SIMD_LEVEL
#error "define MINIMAX_SIMD_LEVEL before including simd_vec-inl.h"
#endif

#if MINIMAX_SIMD_LEVEL == 2
#define MINIMAX_SIMD_TARGET_STRING "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma"
#elif MINIMAX_SIMD_LEVEL == 1
#define MINIMAX_SIMD_TARGET_STRING "avx2,fma"
#endif

#ifdef MINIMAX_SIMD_TARGET_STRING
#define MINIMAX_SIMD __attribute__((target(MINIMAX_SIMD_TARGET_STRING)))
#else
#define MINIMAX_SIMD
#endif
#define MINIMAX_SIMD_INLINE MINIMAX_SIMD inline __attribute__((always_inline))

namespace minimax::cpu_ops_detail {
namespace {

// e^x for x <= 0 (what softmax needs): n = round(x·log2 e), r = x − n·ln 2 in two parts, a
// degree-6 polynomial for e^r on |r| <= ln2/2 (the Cephes expf coefficients, max error about 1
// ulp), times 2^n built in the exponent field. Below −87.33 (where 2^n would leave the normal
// range) the result is 0; NaN stays NaN.
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
constexpr float kExpUnderflow = -87.33654f;
constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                               4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

#if MINIMAX_SIMD_LEVEL == 2

struct VecF {
  using T = __m512;
  static constexpr int kLanes = 16;
  static MINIMAX_SIMD_INLINE __mmask16 first(int n) {
    return static_cast<__mmask16>((1u << n) - 1);
  }
  static MINIMAX_SIMD_INLINE T zero() { return _mm512_setzero_ps(); }
  static MINIMAX_SIMD_INLINE T set1(float v) { return _mm512_set1_ps(v); }
  static MINIMAX_SIMD_INLINE T load(const float* p) { return _mm512_loadu_ps(p); }
  // The first n (< kLanes) lanes from p, zeros above.
  static MINIMAX_SIMD_INLINE T load_n(const float* p, int n) {
    return _mm512_maskz_loadu_ps(first(n), p);
  }
  static MINIMAX_SIMD_INLINE void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static MINIMAX_SIMD_INLINE void store_n(float* p, T v, int n) {
    _mm512_mask_storeu_ps(p, first(n), v);
  }
  static MINIMAX_SIMD_INLINE T add(T a, T b) { return _mm512_add_ps(a, b); }
  static MINIMAX_SIMD_INLINE T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static MINIMAX_SIMD_INLINE T fmadd(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static MINIMAX_SIMD_INLINE float reduce_add(T v) { return _mm512_reduce_add_ps(v); }
  static MINIMAX_SIMD_INLINE T exp(T x) {
    const __mmask16 under = _mm512_cmp_ps_mask(x, set1(kExpUnderflow), _CMP_LT_OQ);
    const T n =
        _mm512_roundscale_ps(mul(x, set1(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    T r = _mm512_fnmadd_ps(n, set1(kLn2Hi), x);
    r = _mm512_fnmadd_ps(n, set1(kLn2Lo), r);
    T p = set1(kExpPoly[0]);
#pragma GCC unroll 5
    for (int i = 1; i < 6; ++i) p = fmadd(p, r, set1(kExpPoly[i]));
    const T y = fmadd(p, mul(r, r), add(r, set1(1.0f)));
    const __m512i bits =
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_maskz_mov_ps(static_cast<__mmask16>(~under), mul(y, _mm512_castsi512_ps(bits)));
  }
};

struct VecD {
  using T = __m512d;
  static constexpr int kLanes = 8;
  static MINIMAX_SIMD_INLINE T zero() { return _mm512_setzero_pd(); }
  static MINIMAX_SIMD_INLINE T set1(double v) { return _mm512_set1_pd(v); }
  static MINIMAX_SIMD_INLINE T load(const double* p) { return _mm512_loadu_pd(p); }
  static MINIMAX_SIMD_INLINE void store(double* p, T v) { _mm512_storeu_pd(p, v); }
  static MINIMAX_SIMD_INLINE T fmadd(T a, T b, T c) { return _mm512_fmadd_pd(a, b, c); }
  // out[i] = (rows[0][c + i], ..., rows[7][c + i]) in f64 (exact) for i < 8: an 8×8 transpose.
  static MINIMAX_SIMD_INLINE void load_transposed(const float* const* rows, int64_t c, T* out) {
    __m256 r[8], t[8], u[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(rows[i] + c);
#pragma GCC unroll 4
    for (int i = 0; i < 8; i += 2) {
      t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
      t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
#pragma GCC unroll 2
    for (int i = 0; i < 8; i += 4) {
      u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
      u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
      u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
      u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      out[i] = _mm512_cvtps_pd(_mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
      out[i + 4] = _mm512_cvtps_pd(_mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
    }
  }
};

#elif MINIMAX_SIMD_LEVEL == 1

struct VecF {
  using T = __m256;
  static constexpr int kLanes = 8;
  static MINIMAX_SIMD_INLINE __m256i first(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static MINIMAX_SIMD_INLINE T zero() { return _mm256_setzero_ps(); }
  static MINIMAX_SIMD_INLINE T set1(float v) { return _mm256_set1_ps(v); }
  static MINIMAX_SIMD_INLINE T load(const float* p) { return _mm256_loadu_ps(p); }
  static MINIMAX_SIMD_INLINE T load_n(const float* p, int n) {
    return _mm256_maskload_ps(p, first(n));
  }
  static MINIMAX_SIMD_INLINE void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static MINIMAX_SIMD_INLINE void store_n(float* p, T v, int n) {
    _mm256_maskstore_ps(p, first(n), v);
  }
  static MINIMAX_SIMD_INLINE T add(T a, T b) { return _mm256_add_ps(a, b); }
  static MINIMAX_SIMD_INLINE T mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static MINIMAX_SIMD_INLINE T fmadd(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static MINIMAX_SIMD_INLINE float reduce_add(T v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static MINIMAX_SIMD_INLINE T exp(T x) {
    const T under = _mm256_cmp_ps(x, set1(kExpUnderflow), _CMP_LT_OQ);
    const T n =
        _mm256_round_ps(mul(x, set1(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    T r = _mm256_fnmadd_ps(n, set1(kLn2Hi), x);
    r = _mm256_fnmadd_ps(n, set1(kLn2Lo), r);
    T p = set1(kExpPoly[0]);
#pragma GCC unroll 5
    for (int i = 1; i < 6; ++i) p = fmadd(p, r, set1(kExpPoly[i]));
    const T y = fmadd(p, mul(r, r), add(r, set1(1.0f)));
    const __m256i bits =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(under, mul(y, _mm256_castsi256_ps(bits)));
  }
};

struct VecD {
  using T = __m256d;
  static constexpr int kLanes = 4;
  static MINIMAX_SIMD_INLINE T zero() { return _mm256_setzero_pd(); }
  static MINIMAX_SIMD_INLINE T set1(double v) { return _mm256_set1_pd(v); }
  static MINIMAX_SIMD_INLINE T load(const double* p) { return _mm256_loadu_pd(p); }
  static MINIMAX_SIMD_INLINE void store(double* p, T v) { _mm256_storeu_pd(p, v); }
  static MINIMAX_SIMD_INLINE T fmadd(T a, T b, T c) { return _mm256_fmadd_pd(a, b, c); }
  // out[i] = (rows[0][c + i], ..., rows[3][c + i]) in f64 (exact) for i < 4: a 4×4 transpose.
  static MINIMAX_SIMD_INLINE void load_transposed(const float* const* rows, int64_t c, T* out) {
    __m128 r0 = _mm_loadu_ps(rows[0] + c), r1 = _mm_loadu_ps(rows[1] + c);
    __m128 r2 = _mm_loadu_ps(rows[2] + c), r3 = _mm_loadu_ps(rows[3] + c);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    out[0] = _mm256_cvtps_pd(r0);
    out[1] = _mm256_cvtps_pd(r1);
    out[2] = _mm256_cvtps_pd(r2);
    out[3] = _mm256_cvtps_pd(r3);
  }
};

#else  // portable

struct VecF {
  using T = float;
  static constexpr int kLanes = 1;
  static inline T zero() { return 0.0f; }
  static inline T set1(float v) { return v; }
  static inline T load(const float* p) { return *p; }
  static inline T load_n(const float* p, int n) { return n > 0 ? *p : 0.0f; }
  static inline void store(float* p, T v) { *p = v; }
  static inline void store_n(float* p, T v, int n) {
    if (n > 0) *p = v;
  }
  static inline T add(T a, T b) { return a + b; }
  static inline T mul(T a, T b) { return a * b; }
  static inline T fmadd(T a, T b, T c) { return a * b + c; }
  static inline float reduce_add(T v) { return v; }
  static inline T exp(T x) { return std::exp(x); }
};

struct VecD {
  using T = double;
  static constexpr int kLanes = 1;
  static inline T zero() { return 0.0; }
  static inline T set1(double v) { return v; }
  static inline T load(const double* p) { return *p; }
  static inline void store(double* p, T v) { *p = v; }
  // The product of two f32 values is exact in double, so this equals a fused multiply-add.
  static inline T fmadd(T a, T b, T c) { return c + a * b; }
  static inline void load_transposed(const float* const* rows, int64_t c, T* out) {
    out[0] = rows[0][c];
  }
};

#endif

}  // namespace
}  // namespace minimax::cpu_ops_detail
