// The AVX2 row loop the per-format kernels share (same structure as linear_avx512-inl.h with 8-lane
// f32 vectors): a tile of R weight rows × T tokens walks the columns chunk by chunk, the decoder
// turns each chunk of a row into f32 vectors and the tile multiplies them with every token of the
// tile. Included only by .cc files; everything has internal linkage.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/cpu/linear_internal.h"

#define MINIMAX_AVX2 __attribute__((target("avx2,fma,f16c,bmi,bmi2")))
#ifndef MINIMAX_ALWAYS_INLINE
#define MINIMAX_ALWAYS_INLINE inline __attribute__((always_inline))
#endif

namespace minimax::cpu_linear_detail {
namespace {

// A decoder D provides kChunkCols, kVectors (K: 8-float vectors per chunk, each pairs with 32 bytes
// of x), kGroups (0: no chunk scale; 1 or 2: scale groups), group(k), and
//   template <bool kTail> void load(row, chunk, valid_cols, __m256* w)  (tail columns decode to 0)
//   void chunk_scales(row, chunk, valid_cols, __m256* s)  (kGroups vectors, per-lane multipliers)
//   float row_scale(row)

template <class D, int R, int T, bool kTail>
MINIMAX_AVX2 MINIMAX_ALWAYS_INLINE void chunk256(const D& d, int64_t row0, int64_t rstep, int64_t c,
                                                 int valid, const float* x, int64_t x_stride,
                                                 __m256 (&acc)[R][T]) {
  constexpr int K = D::kVectors;
  const float* xc = x + c * (K * 8);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    __m256 w[K];
    d.template load<kTail>(row0 + r * rstep, c, valid, w);
    if constexpr (D::kGroups > 0) {
      __m256 s[D::kGroups];
      d.template chunk_scales<kTail>(row0 + r * rstep, c, valid, s);
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) {
        const float* xt = xc + t * x_stride;
        __m256 p[D::kGroups];
#pragma GCC unroll 2
        for (int g = 0; g < D::kGroups; ++g) p[g] = _mm256_setzero_ps();
#pragma GCC unroll 8
        for (int k = 0; k < K; ++k)
          p[D::group(k)] = _mm256_fmadd_ps(w[k], _mm256_loadu_ps(xt + 8 * k), p[D::group(k)]);
#pragma GCC unroll 2
        for (int g = 0; g < D::kGroups; ++g) acc[r][t] = _mm256_fmadd_ps(p[g], s[g], acc[r][t]);
      }
    } else {
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) {
        const float* xt = xc + t * x_stride;
#pragma GCC unroll 8
        for (int k = 0; k < K; ++k)
          acc[r][t] = _mm256_fmadd_ps(w[k], _mm256_loadu_ps(xt + 8 * k), acc[r][t]);
      }
    }
  }
}

MINIMAX_AVX2 MINIMAX_ALWAYS_INLINE float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// y for rows row0 + r · rstep (r < R) and tokens [tok0, tok0 + T).
template <class D, int R, int T>
MINIMAX_AVX2 void tile256(const D& d, const LinearJob& job, int64_t row0, int64_t tok0,
                          int64_t rstep = 1) {
  const int64_t cols = job.w->cols, rows = job.w->rows;
  const float* x = static_cast<const float*>(job.x) + tok0 * job.x_stride;
  __m256 acc[R][T];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  const int64_t full = cols / D::kChunkCols;
  const int rem = static_cast<int>(cols % D::kChunkCols);
  for (int64_t c = 0; c < full; ++c)
    chunk256<D, R, T, false>(d, row0, rstep, c, D::kChunkCols, x, job.x_stride, acc);
  if (rem != 0) chunk256<D, R, T, true>(d, row0, rstep, full, rem, x, job.x_stride, acc);
  for (int r = 0; r < R; ++r) {
    const int64_t row = row0 + r * rstep;
    const float scale = d.row_scale(row);
    for (int t = 0; t < T; ++t) job.y[(tok0 + t) * rows + row] = hsum256(acc[r][t]) * scale;
  }
}

// Same tiling as rows512: four rows per pass for one token (a quarter of the range apart where
// rows_apart<D>()), one row × up to four tokens otherwise.
template <class D>
MINIMAX_AVX2 void rows256(const LinearJob& job, int64_t row_begin, int64_t row_end) {
  const D d(*job.w);
  if (job.tokens == 1) {
    const TileRows t(row_begin, row_end, 4, rows_apart<D>());
    for (int64_t i = 0; i < t.tiles; ++i) tile256<D, 4, 1>(d, job, t.first(i), 0, t.step);
    for (int64_t r = t.rest(); r < row_end; ++r) tile256<D, 1, 1>(d, job, r, 0);
    return;
  }
  for (int64_t r = row_begin; r < row_end; ++r) {
    for (int64_t t = 0; t < job.tokens; t += 4) {
      switch (std::min<int64_t>(4, job.tokens - t)) {
        case 1:
          tile256<D, 1, 1>(d, job, r, t);
          break;
        case 2:
          tile256<D, 1, 2>(d, job, r, t);
          break;
        case 3:
          tile256<D, 1, 3>(d, job, r, t);
          break;
        default:
          tile256<D, 1, 4>(d, job, r, t);
          break;
      }
    }
  }
}

// Software prefetch ahead in each weight row (see kPrefetchBytes in linear_avx512-inl.h).
template <bool kTail>
MINIMAX_AVX2 MINIMAX_ALWAYS_INLINE void prefetch256(const void* p) {
  if constexpr (!kTail) _mm_prefetch(static_cast<const char*>(p) + 512, _MM_HINT_T0);
}

// The last, partial chunk of a row copied into zeros, so whole-vector loads never read past the
// row (AVX2 has no byte-masked loads).
template <int kBytes>
struct TailBuffer {
  alignas(32) uint8_t bytes[kBytes];
  TailBuffer(const uint8_t* src, int64_t n) {
    std::memset(bytes, 0, kBytes);
    std::memcpy(bytes, src, static_cast<size_t>(n));
  }
};

}  // namespace
}  // namespace minimax::cpu_linear_detail
