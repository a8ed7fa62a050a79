// The AVX-512 row loop the per-format kernels share: a tile of R weight rows × T tokens walks the
// columns chunk by chunk; the format's decoder turns each chunk of a row into vectors (f32, or bf16
// pairs for vdpbf16ps) and the tile multiplies them with every token of the tile, so each weight
// byte is decoded once per tile and read from memory once per call. Included only by .cc files,
// which define MINIMAX_AVX512_TARGET (the target attribute string of their kernels) first; all of
// it has internal linkage, so code compiled for AVX-512 never leaks into portable callers.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/gcc12_avx512_warnings-inl.h"
#include "kernels/cpu/linear_internal.h"

#ifndef MINIMAX_AVX512_TARGET
#error "define MINIMAX_AVX512_TARGET before including linear_avx512-inl.h"
#endif
#define MINIMAX_AVX512 __attribute__((target(MINIMAX_AVX512_TARGET)))

#ifndef MINIMAX_ALWAYS_INLINE
#define MINIMAX_ALWAYS_INLINE inline __attribute__((always_inline))
#endif

namespace minimax::cpu_linear_detail {
namespace {

// A decoder D provides:
//   kChunkCols   columns per chunk; kVectors (K) vectors per chunk, each pairs with 64 bytes of x
//   kBf16X       false: Vec = __m512 of f32 weights, x f32; true: Vec = __m512i of bf16 pairs, x
//   bf16 kGroups      0: no chunk scale; 1 or 2: the chunk's vectors form kGroups groups
//   (group(k)), and
//                each group's partial sum is multiplied by its chunk scale vector (block formats)
//   template <bool kTail> void load(row, chunk, valid_cols, Vec* w): the chunk's K vectors; with
//                kTail only valid_cols < kChunkCols columns exist and the rest must decode to 0
//   void chunk_scales(row, chunk, valid_cols, __m512* s): kGroups per-lane multipliers
//   float row_scale(row): multiplier of the row's final sum

// 64 bytes of x in a register that the compiler may not fold back into each use: the rows of a
// tile share one load of each activation vector (folded, every row's FMA loaded it again, and
// the loads, two per cycle, bounded the multi-token tiles).
template <bool kBf16X>
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE auto load_x512(const char* x) {
  if constexpr (kBf16X) {
    __m512i v = _mm512_loadu_si512(x);
    asm("" : "+v"(v));
    return v;
  } else {
    __m512 v = _mm512_loadu_ps(reinterpret_cast<const float*>(x));
    asm("" : "+v"(v));
    return v;
  }
}

// acc + w · x: x f32, or bf16 pairs (kBf16X), as load_x512 gives it. Split activations (kSplit,
// bf16 only) store a chunk's K vectors of hi halves, then its K vectors of lo halves, and the
// chunk loops below call this once for each, into different accumulators (one dependency chain
// would limit the tile).
template <bool kBf16X, class Vec, class X>
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE __m512 madd512(__m512 acc, Vec w, X x) {
  if constexpr (kBf16X) {
    return _mm512_dpbf16_ps(acc, (__m512bh)w, (__m512bh)x);
  } else {
    return _mm512_fmadd_ps(w, x, acc);
  }
}

// Each (row, token) sums into two accumulators (even and odd vectors of a chunk) so that no
// single FMA chain limits a tile. The rows of the tile are decoded first and each activation
// vector is loaded once for all of them: with several tokens the activations, not the weights,
// are most of the bytes a tile reads.
template <class D, bool kSplit, int R, int T, bool kTail>
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void chunk512(const D& d, int64_t row0, int64_t rstep,
                                                   int64_t c, int valid, const char* x,
                                                   int64_t x_row_bytes, __m512 (&acc)[R][T][2]) {
  constexpr int K = D::kVectors;
  constexpr int kLo = K * 64;         // bytes from a hi vector of x to its lo vector
  constexpr int kS = kSplit ? 2 : 1;  // hi (and lo) partial sums
  const char* xc = x + c * (K * 64) * kS;
  typename D::Vec w[R][K];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) d.template load<kTail>(row0 + r * rstep, c, valid, w[r]);
  if constexpr (D::kGroups > 0) {
    __m512 s[R][D::kGroups];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) d.template chunk_scales<kTail>(row0 + r * rstep, c, valid, s[r]);
    // hi and lo halves into the same partial sums (registers are short: a second set would not
    // fit next to the decoded weights and the decode tables).
    __m512 p[R][T][D::kGroups];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t)
#pragma GCC unroll 2
        for (int g = 0; g < D::kGroups; ++g) p[r][t][g] = _mm512_setzero_ps();
#pragma GCC unroll 2
    for (int h = 0; h < kS; ++h)
#pragma GCC unroll 8
      for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          const auto xv = load_x512<D::kBf16X>(xc + t * x_row_bytes + 64 * k + h * kLo);
#pragma GCC unroll 4
          for (int r = 0; r < R; ++r)
            p[r][t][D::group(k)] = madd512<D::kBf16X>(p[r][t][D::group(k)], w[r][k], xv);
        }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t)
#pragma GCC unroll 2
        for (int g = 0; g < D::kGroups; ++g)
          acc[r][t][g % 2] = _mm512_fmadd_ps(p[r][t][g], s[r][g], acc[r][t][g % 2]);
  } else {
#pragma GCC unroll 8
    for (int k = 0; k < K; ++k)
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) {
        const char* xk = xc + t * x_row_bytes + 64 * k;
#pragma GCC unroll 2
        for (int h = 0; h < kS; ++h) {  // the lo halves into the other accumulator
          const auto xv = load_x512<D::kBf16X>(xk + h * kLo);
#pragma GCC unroll 4
          for (int r = 0; r < R; ++r)
            acc[r][t][(k + h) % 2] = madd512<D::kBf16X>(acc[r][t][(k + h) % 2], w[r][k], xv);
        }
      }
  }
}

// y for rows row0 + r · rstep (r < R) and tokens [tok0, tok0 + T).
template <class D, bool kSplit, int R, int T>
MINIMAX_AVX512 void tile512(const D& d, const LinearJob& job, int64_t row0, int64_t tok0,
                            int64_t rstep = 1) {
  const int64_t cols = job.w->cols, rows = job.w->rows;
  const int64_t x_row_bytes = job.x_stride * (D::kBf16X ? 2 : 4);
  const char* x = static_cast<const char*>(job.x) + tok0 * x_row_bytes;
  __m512 acc[R][T][2];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) acc[r][t][0] = acc[r][t][1] = _mm512_setzero_ps();
  const int64_t full = cols / D::kChunkCols;
  const int rem = static_cast<int>(cols % D::kChunkCols);
  for (int64_t c = 0; c < full; ++c)
    chunk512<D, kSplit, R, T, false>(d, row0, rstep, c, D::kChunkCols, x, x_row_bytes, acc);
  if (rem != 0) chunk512<D, kSplit, R, T, true>(d, row0, rstep, full, rem, x, x_row_bytes, acc);
  for (int r = 0; r < R; ++r) {
    const float scale = d.row_scale(row0 + r * rstep);
    for (int t = 0; t < T; ++t)
      job.y[(tok0 + t) * rows + row0 + r * rstep] =
          _mm512_reduce_add_ps(_mm512_add_ps(acc[r][t][0], acc[r][t][1])) * scale;
  }
}

// Tiles of R rows (rstep apart) × up to four tokens, the token groups of one row pair following
// each other while its bytes are still in L1.
template <class D, bool kSplit, int R>
MINIMAX_AVX512 void token_tiles512(const D& d, const LinearJob& job, int64_t r, int64_t tb,
                                   int64_t te, int64_t rstep = 1) {
  for (int64_t t = tb; t < te; t += 4) {
    switch (std::min<int64_t>(4, te - t)) {
      case 1:
        tile512<D, kSplit, R, 1>(d, job, r, t, rstep);
        break;
      case 2:
        tile512<D, kSplit, R, 2>(d, job, r, t, rstep);
        break;
      case 3:
        tile512<D, kSplit, R, 3>(d, job, r, t, rstep);
        break;
      default:
        tile512<D, kSplit, R, 4>(d, job, r, t, rstep);
        break;
    }
  }
}

// The RowRangeFn of decoder D: one token alone takes four rows per pass (four independent weight
// streams keep the loads busy); several tokens take two rows × up to four tokens per tile. kSplit
// (bf16 decoders only): the activations are hi + lo bf16 pairs (ActivationPrecision::kBF16x2).
// A tile's rows lie a quarter (a half) of the range apart where rows_apart<D>(), so each of its
// streams walks its own part of the weight in address order. Adjacent rows of a few KB (an expert's
// 1536-byte rows) put a tile's four streams in the same 4 KB pages, where the hardware prefetchers
// of the Intel Xeon with AMX followed none of them: FP8 rows of 1536 bytes streamed at 0.69 of the
// read bandwidth against 0.89 for 8 KB rows; apart, at the long rows' rate (docs/cpu_kernels.md,
// "Tiles"). Which outputs a tile computes changes; how each is summed does not.
template <class D, bool kSplit = false>
MINIMAX_AVX512 void rows512(const LinearJob& job, int64_t row_begin, int64_t row_end) {
  static_assert(!kSplit || D::kBf16X, "split activations need a bf16-pair decoder");
  const D d(*job.w);
  const TileRows t(row_begin, row_end, job.tokens == 1 ? 4 : 2, rows_apart<D>());
  for (int64_t i = 0; i < t.tiles; ++i) {
    if (job.tokens == 1)
      tile512<D, kSplit, 4, 1>(d, job, t.first(i), 0, t.step);
    else
      token_tiles512<D, kSplit, 2>(d, job, t.first(i), 0, job.tokens, t.step);
  }
  for (int64_t r = t.rest(); r < row_end; ++r)
    token_tiles512<D, kSplit, 1>(d, job, r, 0, job.tokens);
}

// Software prefetch, two streams per weight row:
// - kPrefetchBytes ahead in the row, into L1 (the hardware prefetchers alone leave the decode-heavy
//   kernels 10-15% below the read bandwidth on the Intel VMs; 512 bytes measured best of 256-4096).
// - prefetch_ahead_bytes(row_bytes) further on (whole rows, the same column), into L2: at least
//   kPrefetchRows rows, and for short rows enough (a multiple of the 4-row tile, so every line of
//   the rows ahead is covered) to stay kPrefetchAheadBytes ahead. Each stream of a tile reads
//   consecutive rows (rows_apart), so this walks the weight linearly a few KB ahead of its loads.
//   With adjacent rows a tile reads four (or two) interleaved streams that restart every few KB,
//   which the hardware prefetchers of AMD Zen 4 do not follow: without it one core streamed FP8
//   weights from memory at 0.4 of its read-only sum, with it at 0.85 (T0 hints at the same
//   distance: 0.5), and it costs nothing when the weights are in cache. Rows of 384 bytes (an
//   expert's down projection split over two tensor-parallel ranks) were fetched only 3 KB ahead by
//   8 rows, too close to hide the memory's latency. Past the last row of a range it touches rows of
//   what follows (the next slice or matrix), never dereferenced.
inline constexpr int kPrefetchBytes = 512;
inline constexpr int64_t kPrefetchRows = 8;
inline constexpr int64_t kPrefetchAheadBytes = 12 * 1024;  // 8 rows of the bench shape's 1536
// The L2 prefetch's distance for rows `row_bytes` apart; decoders keep it beside their stride.
inline int64_t prefetch_ahead_bytes(int64_t row_bytes) {
  if (row_bytes <= 0 || kPrefetchRows * row_bytes >= kPrefetchAheadBytes)
    return kPrefetchRows * row_bytes;
  return (kPrefetchAheadBytes / row_bytes + 3) / 4 * 4 * row_bytes;
}
template <bool kTail>
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void prefetch512(const void* p, int64_t ahead_bytes) {
  if constexpr (!kTail) {
    const char* c = static_cast<const char*>(p);
    _mm_prefetch(c + kPrefetchBytes, _MM_HINT_T0);
    // Integer arithmetic: the address may lie past the object, which prefetch allows.
    _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(c) +
                                               static_cast<uintptr_t>(ahead_bytes)),
                 _MM_HINT_T1);
  }
}

// Byte mask of the first n (< 64) bytes / words / dwords.
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE __mmask64 first_bytes(int n) {
  return _bzhi_u64(~0ull, static_cast<unsigned>(n));
}

}  // namespace
}  // namespace minimax::cpu_linear_detail
