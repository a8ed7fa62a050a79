// The AVX-512 level's register-tile attention: a full tile of slots for the query heads of one KV
// group with 128-wide rows, scores and the online-softmax update in zmm registers, K and V decoded
// in registers rather than through scratch. attention_kernels-inl.h's attend_tile takes it at
// MINIMAX_SIMD_LEVEL 2 (the portable path handles every other shape and level). Included by that
// file only, at that level, after the helpers it uses (job_row, prefetch_tile, online_softmax).
// A fragment, included inside attention_kernels-inl.h's namespace (so no includes of its own).
#pragma once

// The lane sums of a[0..15] in one vector, lane i = Σ a[i]: halves, then quarters, then pairs
// within each 128-bit lane, 46 instructions where sixteen separate reductions take about 130.
MINIMAX_SIMD_INLINE __m512 lane_sums16(const __m512* a) {
  __m512 s[8], t[4], v[2];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i)  // quarters: a_i (q0 + q2, q1 + q3), a_{i+8} (the same)
    s[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a[i], a[i + 8], 0x44),
                         _mm512_shuffle_f32x4(a[i], a[i + 8], 0xEE));
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i)  // quarters: a_i, a_{i+8}, a_{i+4}, a_{i+12}, four lanes each
    t[i] = _mm512_add_ps(_mm512_shuffle_f32x4(s[i], s[i + 4], 0x88),
                         _mm512_shuffle_f32x4(s[i], s[i + 4], 0xDD));
#pragma GCC unroll 2
  for (int i = 0; i < 2; ++i)
    v[i] = _mm512_add_ps(_mm512_shuffle_ps(t[2 * i], t[2 * i + 1], 0x44),
                         _mm512_shuffle_ps(t[2 * i], t[2 * i + 1], 0xEE));
  const __m512 sums =
      _mm512_add_ps(_mm512_shuffle_ps(v[0], v[1], 0x88), _mm512_shuffle_ps(v[0], v[1], 0xDD));
  return _mm512_shuffle_f32x4(sums, sums, _MM_SHUFFLE(3, 1, 2, 0));  // quarters 1 and 2 swap
}

// 16 cache elements from `p` on as f32 (kv_codec.h values, as decode_row gives them).
template <KvDtype kType>
MINIMAX_SIMD_INLINE __m512 load16(const char* p) {
  if constexpr (kType == KvDtype::kF32) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(p));
  } else if constexpr (kType == KvDtype::kBF16) {
    return bf16_to_f32_16(reinterpret_cast<const uint16_t*>(p));
  } else {
    return fp8_to_f32_16(reinterpret_cast<const uint8_t*>(p));
  }
}

constexpr int kRowDim = 128;  // the head_dim of M2 and M3, which the in-register tile path serves

// Query heads [h, h + G) of a full tile, its K and V rows (krow, vrow: each slot's first element
// of this group) read and decoded in registers rather than through scratch (decoding into scratch,
// loads, widening and stores, was about a third of a bf16 tile's time): scores (× scale) into
// scores[head][slot], each head's online-softmax update, then acc += p·v. The V side sums in
// accumulate()'s order; a score sums its slot's products in column order as dot4 does, then
// lane_sums16 instead of one reduction per score. Every cache type takes this path at this width,
// so a bf16 or fp8 cache still gives the bits of an f32 cache of its decoded values.
template <KvDtype kType, int G>
MINIMAX_SIMD_INLINE void tile_heads(const AttendJob& j, const char* const* krow,
                                    const char* const* vrow, int h, SoftmaxState& st) {
  float* const acc = st.acc;
  float* const scores = st.scores;
  constexpr int d = kRowDim, chunks = kRowDim / 16;
  constexpr int64_t bytes = kType == KvDtype::kF32 ? 4 : kType == KvDtype::kBF16 ? 2 : 1;
  const __m512i transpose = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __m512 scale = _mm512_set1_ps(j.scale);
  for (int s0 = 0; s0 < kAttendTile; s0 += 4) {  // four slots × G heads per pass
    __m512 a[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) a[i] = _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int c = 0; c < chunks; ++c)
#pragma GCC unroll 4
      for (int s = 0; s < 4; ++s) {
        const __m512 k = load16<kType>(krow[s0 + s] + 16 * c * bytes);
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g)
          a[4 * s + g] =
              _mm512_fmadd_ps(_mm512_loadu_ps(j.q + (h + g) * d + 16 * c), k, a[4 * s + g]);
      }
    // Lane 4s + g holds slot s of head g: transposed to lane 4g + s, scaled (the products one
    // multiply per score gives), and stored four slots per head by a masked store (reading the
    // sums back one by one from memory stalled on the store, a tenth of the tile's time). The
    // store's base lies 4g floats before head g's row, inside the scores of the heads before it.
    const __m512 sums = _mm512_mul_ps(_mm512_permutexvar_ps(transpose, lane_sums16(a)), scale);
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g)
      _mm512_mask_storeu_ps(scores + (h + g) * kAttendTile + s0 - 4 * g,
                            static_cast<__mmask16>(0xF << (4 * g)), sums);
  }
  float corr[G];
  for (int g = 0; g < G; ++g)
    corr[g] = online_softmax(scores + (h + g) * kAttendTile, kAttendTile, kAttendTile,
                             st.running_max[h + g], st.denom[h + g]);
  // Four chunks of every head at a time: each V load serves 4·G products (one chunk's loads
  // served G, with a broadcast of the weight per product as well, so loads outnumbered the
  // products). Each element still sums its slots in order from acc·corr.
  constexpr int kChunks = 4;
  static_assert(chunks % kChunks == 0);
  for (int c = 0; c < chunks; c += kChunks) {
    __m512 out[G][kChunks];
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g)
#pragma GCC unroll 4
      for (int u = 0; u < kChunks; ++u)
        out[g][u] = _mm512_mul_ps(_mm512_loadu_ps(acc + (h + g) * d + 16 * (c + u)),
                                  _mm512_set1_ps(corr[g]));
    for (int i = 0; i < kAttendTile; ++i) {
      __m512 v[kChunks];
#pragma GCC unroll 4
      for (int u = 0; u < kChunks; ++u) v[u] = load16<kType>(vrow[i] + 16 * (c + u) * bytes);
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g) {
        const __m512 p = _mm512_set1_ps(scores[(h + g) * kAttendTile + i]);
#pragma GCC unroll 4
        for (int u = 0; u < kChunks; ++u) out[g][u] = _mm512_fmadd_ps(p, v[u], out[g][u]);
      }
    }
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g)
#pragma GCC unroll 4
      for (int u = 0; u < kChunks; ++u)
        _mm512_storeu_ps(acc + (h + g) * d + 16 * (c + u), out[g][u]);
  }
}

// A full tile at head_dim 128 for query heads [h0, h1), four at a time.
template <KvDtype kType>
MINIMAX_SIMD_INLINE void attend_tile_rows(const AttendJob& j, const TileSpan& t, SoftmaxState& st) {
  const char* krow[kAttendTile];
  const char* vrow[kAttendTile];
  for (int i = 0; i < kAttendTile; ++i) {
    const int64_t element = job_row(j, t.s0 + i) * j.cache_stride + t.group;
    krow[i] = static_cast<const char*>(kv_element(j.k, kType, element));
    vrow[i] = static_cast<const char*>(kv_element(j.v, kType, element));
  }
  for (int h = t.h0; h < t.h1; h += 4) {
    switch (std::min(4, t.h1 - h)) {
      case 4:
        tile_heads<kType, 4>(j, krow, vrow, h, st);
        break;
      case 3:
        tile_heads<kType, 3>(j, krow, vrow, h, st);
        break;
      case 2:
        tile_heads<kType, 2>(j, krow, vrow, h, st);
        break;
      default:
        tile_heads<kType, 1>(j, krow, vrow, h, st);
        break;
    }
  }
}
