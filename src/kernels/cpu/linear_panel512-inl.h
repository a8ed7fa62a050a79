// The batch path of the AVX-512 row kernels (rows512, linear_avx512-inl.h): a panel of weight rows
// (up to kPanelMaxBytes) is decoded once (the vectors the decoder's load gives, and its chunk
// scales), and tiles of R rows × T tokens run over it (panel_tile512), so a weight byte is decoded
// once per job instead of once per four tokens. Every output is the same sequence of vector
// operations on the same vectors, into the same accumulators, with the same final reduction, as in
// the one-token call, so the results are the same bits for any number of tokens (batch
// invariance). Included only by linear_avx512-inl.h.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "kernels/cpu/linear_internal.h"

namespace minimax::cpu_linear_detail {
namespace {

// Jobs with this many tokens or more take the panel (fewer share one decode per tile anyway).
inline constexpr int64_t kPanelMinTokens = 5;

// A 64-byte aligned vector of f32 (kInt false) or of integer bits (kInt true: bf16 pairs).
template <bool kInt>
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE auto load_vec512(const __m512* p) {
  if constexpr (kInt) {
    return _mm512_load_si512(p);
  } else {
    return _mm512_load_ps(reinterpret_cast<const float*>(p));
  }
}
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void store_vec512(__m512* p, __m512 v) {
  _mm512_store_ps(reinterpret_cast<float*>(p), v);
}
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void store_vec512(__m512* p, __m512i v) {
  _mm512_store_si512(p, v);
}

// Decoder over a panel of decoded rows [row0, row0 + rows): per row and chunk, D's K vectors and
// then its kGroups scale vectors, 64-byte aligned. Its row scales are D's.
template <class D>
struct Panel512 {
  static constexpr int kChunkCols = D::kChunkCols, kVectors = D::kVectors, kGroups = D::kGroups;
  static constexpr bool kBf16X = D::kBf16X;
  static constexpr int kSlots = kVectors + kGroups;  // 64-byte vectors per row and chunk
  using Vec = typename D::Vec;
  using Decoder = D;
  const D& d;
  __m512* slots;
  int64_t row0, chunks;

  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE const __m512* at(int64_t row, int64_t c) const {
    return slots + ((row - row0) * chunks + c) * kSlots;
  }
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int, Vec* w) const {
    const __m512* p = at(row, c);
#pragma GCC unroll 8
    for (int k = 0; k < kVectors; ++k) w[k] = load_vec512<kBf16X>(p + k);
  }
  static constexpr int group(int k) { return D::group(k); }
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void chunk_scales(int64_t row, int64_t c, int,
                                                         __m512* s) const {
    const __m512* p = at(row, c) + kVectors;
#pragma GCC unroll 2
    for (int g = 0; g < kGroups; ++g) s[g] = load_vec512<false>(p + g);
  }
  float row_scale(int64_t row) const { return d.row_scale(row); }

  // Decodes rows [row0, row0 + rows) of d into the panel: what tile512 would decode, chunk by
  // chunk, including the zeroed columns past the width in the last chunk.
  MINIMAX_AVX512 void fill(int64_t rows, int64_t cols) const {
    const int64_t full = cols / kChunkCols;
    const int rem = static_cast<int>(cols % kChunkCols);
    for (int64_t r = row0; r < row0 + rows; ++r) {
      for (int64_t c = 0; c < full; ++c) fill_chunk<false>(r, c, kChunkCols);
      if (rem != 0) fill_chunk<true>(r, full, rem);
    }
  }
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void fill_chunk(int64_t row, int64_t c, int valid) const {
    __m512* p = slots + ((row - row0) * chunks + c) * kSlots;
    Vec w[kVectors];
    d.template load<kTail>(row, c, valid, w);
#pragma GCC unroll 8
    for (int k = 0; k < kVectors; ++k) store_vec512(p + k, w[k]);
    if constexpr (kGroups > 0) {
      __m512 s[kGroups];
      d.template chunk_scales<kTail>(row, c, valid, s);
#pragma GCC unroll 2
      for (int g = 0; g < kGroups; ++g) store_vec512(p + kVectors + g, s[g]);
    }
  }
};

// acc + w · x with x already in a register: madd512's operation.
template <bool kBf16X, class Vec>
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE __m512 madd_reg512(__m512 acc, Vec w, Vec x) {
  if constexpr (kBf16X) {
    return _mm512_dpbf16_ps(acc, (__m512bh)w, (__m512bh)x);
  } else {
    return _mm512_fmadd_ps(w, x, acc);
  }
}

template <bool kBf16X>
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE auto load_x512(const char* x) {
  if constexpr (kBf16X) {
    return _mm512_loadu_si512(x);
  } else {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(x));
  }
}

// tile512 over a panel: for every (row, token) the same operations on the same vectors into the
// same accumulators in the same order as chunk512 and tile512 (linear_avx512-inl.h; any change of
// order there must be made here too, and tests/unit/kernels/cpu_linear_invariance_test.cc
// compares the two bit for bit), but vector by vector: each activation vector is loaded once into
// a register for the tile's R rows and each weight vector once for its T tokens, where chunk512
// keeps a chunk's decoded vectors in registers and reads activations from memory per product.
template <class D, bool kSplit, int R, int T>
MINIMAX_AVX512 void panel_tile512(const Panel512<D>& p, const LinearJob& job, int64_t row0,
                                  int64_t tok0) {
  constexpr int K = D::kVectors, G = D::kGroups;
  constexpr int kLo = K * 64;         // bytes from a hi vector of x to its lo vector
  constexpr int kS = kSplit ? 2 : 1;  // hi (and lo) partial sums
  using Vec = typename D::Vec;
  const int64_t rows = job.w->rows;
  const int64_t x_row_bytes = job.x_stride * (D::kBf16X ? 2 : 4);
  const char* x = static_cast<const char*>(job.x) + tok0 * x_row_bytes;
  __m512 acc[R][T][2];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[r][t][0] = acc[r][t][1] = _mm512_setzero_ps();
  for (int64_t c = 0; c < p.chunks; ++c) {
    const char* xc = x + c * (K * 64) * kS;
    const __m512* wc[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) wc[r] = p.at(row0 + r, c);
    if constexpr (G > 0) {
      __m512 part[R][T][G];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t)
#pragma GCC unroll 2
          for (int g = 0; g < G; ++g) part[r][t][g] = _mm512_setzero_ps();
#pragma GCC unroll 2
      for (int h = 0; h < kS; ++h)
#pragma GCC unroll 8
        for (int k = 0; k < K; ++k) {
          Vec xv[T];
#pragma GCC unroll 8
          for (int t = 0; t < T; ++t)
            xv[t] = load_x512<D::kBf16X>(xc + t * x_row_bytes + 64 * k + h * kLo);
#pragma GCC unroll 4
          for (int r = 0; r < R; ++r) {
            const Vec w = load_vec512<D::kBf16X>(wc[r] + k);
#pragma GCC unroll 8
            for (int t = 0; t < T; ++t)
              part[r][t][D::group(k)] = madd_reg512<D::kBf16X>(part[r][t][D::group(k)], w, xv[t]);
          }
        }
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
        for (int g = 0; g < G; ++g) {
          const __m512 s = load_vec512<false>(wc[r] + K + g);
#pragma GCC unroll 8
          for (int t = 0; t < T; ++t)
            acc[r][t][g % 2] = _mm512_fmadd_ps(part[r][t][g], s, acc[r][t][g % 2]);
        }
    } else {
#pragma GCC unroll 8
      for (int k = 0; k < K; ++k)
#pragma GCC unroll 2
        for (int h = 0; h < kS; ++h) {  // the lo halves into the other accumulator
          Vec xv[T];
#pragma GCC unroll 8
          for (int t = 0; t < T; ++t)
            xv[t] = load_x512<D::kBf16X>(xc + t * x_row_bytes + 64 * k + h * kLo);
#pragma GCC unroll 4
          for (int r = 0; r < R; ++r) {
            const Vec w = load_vec512<D::kBf16X>(wc[r] + k);
#pragma GCC unroll 8
            for (int t = 0; t < T; ++t)
              acc[r][t][(k + h) % 2] = madd_reg512<D::kBf16X>(acc[r][t][(k + h) % 2], w, xv[t]);
          }
        }
    }
  }
  for (int r = 0; r < R; ++r) {
    const float scale = p.row_scale(row0 + r);
    for (int t = 0; t < T; ++t)
      job.y[(tok0 + t) * rows + row0 + r] =
          _mm512_reduce_add_ps(_mm512_add_ps(acc[r][t][0], acc[r][t][1])) * scale;
  }
}

// Tile shape over a panel: R rows × T tokens, the fewest vector loads per product,
// (R + T) / (R · T), whose accumulators (two per (row, token); with one scale group a partial sum
// and one accumulator, with two groups two of each), activation vectors and weight vector fit in
// kPanelRegisters of the 32.
inline constexpr int kPanelRegisters = 30;
struct PanelTile {
  int rows, tokens;
};
template <class D>
constexpr PanelTile panel_tile() {
  constexpr int per_output = D::kGroups == 2 ? 4 : 2;
  PanelTile best{1, 1};
  for (int r = 1; r <= 4; ++r) {
    const int t = std::min(8, (kPanelRegisters - 1) / (r * per_output + 1));
    // (r + t) / (r · t) < (R + T) / (R · T), cross-multiplied
    if (t >= 1 && (r + t) * best.rows * best.tokens < (best.rows + best.tokens) * r * t)
      best = {r, t};
  }
  return best;
}

// Decoded bytes a panel holds at most: it stays in L2 (with the job's activations, at most 512 KiB)
// while the activations of one token tile stay in L1 for all of its rows.
inline constexpr int64_t kPanelMaxBytes = 256 * 1024;

// Tokens [t, t + T) against every row of the panel: R rows per tile, single rows at the end.
template <class P, bool kSplit, int R, int T>
MINIMAX_AVX512 void panel_pass512(const P& p, const LinearJob& job, int64_t rows, int64_t t) {
  int64_t r = p.row0;
  for (; r + R <= p.row0 + rows; r += R)
    panel_tile512<typename P::Decoder, kSplit, R, T>(p, job, r, t);
  for (; r < p.row0 + rows; ++r) panel_tile512<typename P::Decoder, kSplit, 1, T>(p, job, r, t);
}

// The last n < T tokens of the job, from t: one pass of n tokens.
template <class P, bool kSplit, int R, int T>
MINIMAX_AVX512 void panel_rest512(const P& p, const LinearJob& job, int64_t rows, int64_t t,
                                  int64_t n) {
  if constexpr (T > 1) {
    if (n == T - 1) return panel_pass512<P, kSplit, R, T - 1>(p, job, rows, t);
    panel_rest512<P, kSplit, R, T - 1>(p, job, rows, t, n);
  }
}

// rows512's path for jobs of kPanelMinTokens or more: the rows in panels of up to kPanelMaxBytes,
// each decoded once and then passed over by every token tile in turn.
template <class D, bool kSplit>
MINIMAX_AVX512 void panel_rows512(const D& d, const LinearJob& job, int64_t row_begin,
                                  int64_t row_end) {
  constexpr int R = panel_tile<D>().rows, T = panel_tile<D>().tokens;
  const int64_t cols = job.w->cols;
  const int64_t chunks = (cols + D::kChunkCols - 1) / D::kChunkCols;
  const int64_t row_bytes = chunks * Panel512<D>::kSlots * static_cast<int64_t>(sizeof(__m512));
  const int64_t panel_rows = std::max<int64_t>(1, kPanelMaxBytes / row_bytes / R) * R;
  thread_local AlignedScratch scratch;
  auto* slots = static_cast<__m512*>(scratch.get(static_cast<size_t>(panel_rows * row_bytes)));
  for (int64_t r = row_begin; r < row_end; r += panel_rows) {
    const Panel512<D> panel{d, slots, r, chunks};
    const int64_t rows = std::min(panel_rows, row_end - r);
    panel.fill(rows, cols);
    int64_t t = 0;
    for (; t + T <= job.tokens; t += T)
      panel_pass512<Panel512<D>, kSplit, R, T>(panel, job, rows, t);
    if (t < job.tokens)
      panel_rest512<Panel512<D>, kSplit, R, T>(panel, job, rows, t, job.tokens - t);
  }
}

}  // namespace
}  // namespace minimax::cpu_linear_detail
