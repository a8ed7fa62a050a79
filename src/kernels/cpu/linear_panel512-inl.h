// The batch path of the AVX-512 row kernels (rows512, linear_avx512-inl.h): a few weight rows are
// decoded once into a panel (the vectors the decoder's load gives, and its chunk scales), and
// tiles of those rows × several tokens run over the panel, so a weight byte is decoded once per
// job instead of once per four tokens. The tiles are tile512 itself with a decoder that reads the
// panel: every output is the same sequence of vector operations on the same vectors, into the same
// accumulators, with the same final reduction, as in the one-token call, so the results are the
// same bits for any number of tokens (batch invariance). Included only by linear_avx512-inl.h.
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

// Tile shape over a panel: R rows × T tokens. Each (row, token) holds two accumulators, and with
// chunk scales kGroups partial sums more; these shapes keep them within the 32 vector registers
// next to the rows' vectors of one chunk.
template <class D>
inline constexpr int kPanelTileRows = D::kGroups == 2 ? 2 : 4;
template <class D>
inline constexpr int kPanelTileTokens = 3;

// Tokens [t, te) of the panel's rows [row, row + R) in tiles of T tokens, the last one smaller.
template <class P, bool kSplit, int R, int T>
MINIMAX_AVX512 void panel_tokens512(const P& p, const LinearJob& job, int64_t row, int64_t t,
                                    int64_t te) {
  for (; t + T <= te; t += T) tile512<P, kSplit, R, T>(p, job, row, t);
  if constexpr (T > 1) {
    if (t < te) panel_tokens512<P, kSplit, R, T - 1>(p, job, row, t, te);
  }
}

// rows512's path for jobs of kPanelMinTokens or more: panels of kPanelTileRows<D> rows.
template <class D, bool kSplit>
MINIMAX_AVX512 void panel_rows512(const D& d, const LinearJob& job, int64_t row_begin,
                                  int64_t row_end) {
  constexpr int R = kPanelTileRows<D>, T = kPanelTileTokens<D>;
  const int64_t cols = job.w->cols;
  const int64_t chunks = (cols + D::kChunkCols - 1) / D::kChunkCols;
  thread_local AlignedScratch scratch;
  auto* slots = static_cast<__m512*>(
      scratch.get(static_cast<size_t>(R * chunks * Panel512<D>::kSlots) * sizeof(__m512)));
  for (int64_t r = row_begin; r < row_end; r += R) {
    const Panel512<D> panel{d, slots, r, chunks};
    const int64_t rows = std::min<int64_t>(R, row_end - r);
    panel.fill(rows, cols);
    if (rows == R) {
      panel_tokens512<Panel512<D>, kSplit, R, T>(panel, job, r, 0, job.tokens);
    } else {
      for (int64_t i = 0; i < rows; ++i)
        panel_tokens512<Panel512<D>, kSplit, 1, T>(panel, job, r + i, 0, job.tokens);
    }
  }
}

}  // namespace
}  // namespace minimax::cpu_linear_detail
