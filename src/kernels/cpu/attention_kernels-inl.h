// The CPU attention kernels, written once against VecF / VecD (simd_vec-inl.h) and compiled per
// ISA level by attention_{avx512,avx2,portable}.cc, which define MINIMAX_SIMD_LEVEL and
// MINIMAX_ATTENTION_TABLE (the name of the AttentionKernels getter) before including this file.
// This file is the portable core every level runs; what only the AVX-512 level has (vector KV
// decoding, the register-tile kernel) is in attention_avx512_{decode,tiles}-inl.h, included at
// MINIMAX_SIMD_LEVEL 2 only.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

#include "kernels/cpu/attention_kernels.h"
#include "kernels/cpu/simd_vec-inl.h"
#include "kernels/kv_codec.h"

#ifndef MINIMAX_ATTENTION_TABLE
#error "define MINIMAX_ATTENTION_TABLE before including attention_kernels-inl.h"
#endif

namespace minimax::cpu_ops_detail {
namespace {

using F = VecF;
using FV = VecF::T;
using D = VecD;
using DV = VecD::T;
constexpr int kF = VecF::kLanes;
constexpr int kD = VecD::kLanes;

// ---- Attention ----------------------------------------------------------------------------------

// Σ a[c]·b[c] in f32, two vector accumulators.
MINIMAX_SIMD_INLINE float dot(const float* a, const float* b, int64_t n) {
  FV s0 = F::zero(), s1 = F::zero();
  int64_t c = 0;
  for (; c + 2 * kF <= n; c += 2 * kF) {
    s0 = F::fmadd(F::load(a + c), F::load(b + c), s0);
    s1 = F::fmadd(F::load(a + c + kF), F::load(b + c + kF), s1);
  }
  if (c + kF <= n) {
    s0 = F::fmadd(F::load(a + c), F::load(b + c), s0);
    c += kF;
  }
  if (c < n) {
    const int rest = static_cast<int>(n - c);
    s1 = F::fmadd(F::load_n(a + c, rest), F::load_n(b + c, rest), s1);
  }
  return F::reduce_add(F::add(s0, s1));
}

// Four tokens' worth of dot products against one query: shares each load of q.
MINIMAX_SIMD_INLINE void dot4(const float* q, const float* k, int64_t stride, int64_t n,
                              float* out) {
  FV s[4] = {F::zero(), F::zero(), F::zero(), F::zero()};
  int64_t c = 0;
  for (; c + kF <= n; c += kF) {
    const FV qv = F::load(q + c);
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) s[i] = F::fmadd(qv, F::load(k + i * stride + c), s[i]);
  }
  if (c < n) {
    const int rest = static_cast<int>(n - c);
    const FV qv = F::load_n(q + c, rest);
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) s[i] = F::fmadd(qv, F::load_n(k + i * stride + c, rest), s[i]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) out[i] = F::reduce_add(s[i]);
}

// p[i] ← exp(p[i] − shift) for i < padded (a multiple of the lane count; lanes from n on hold −inf
// and become 0); returns Σ p.
MINIMAX_SIMD_INLINE float exp_shifted_sum(float* p, int padded, float shift) {
  const FV minus_shift = F::set1(-shift);
  FV sum = F::zero();
  for (int i = 0; i < padded; i += kF) {
    const FV e = F::exp(F::add(F::load(p + i), minus_shift));
    F::store(p + i, e);
    sum = F::add(sum, e);
  }
  return F::reduce_add(sum);
}

// One head's online-softmax step over a tile's scores sc[0, n) (sc[n, padded) hold −inf): turns
// sc into p = exp(s − new max), updates the running max and the denominator, and returns the
// factor by which the head's accumulated output must shrink (0 on the first tile).
MINIMAX_SIMD_INLINE float online_softmax(float* sc, int n, int padded, float& running_max,
                                         float& denom) {
  float tile_max = sc[0];
  for (int i = 1; i < n; ++i) tile_max = std::max(tile_max, sc[i]);
  const float new_max = std::max(running_max, tile_max);
  const float corr = std::exp(running_max - new_max);
  denom = denom * corr + exp_shifted_sum(sc, padded, new_max);
  running_max = new_max;
  return corr;
}

// NV vectors of acc at `acc` (in registers: NV independent FMA chains) ← acc·c + Σ_{i<n} p[i]·v_i.
template <int NV>
MINIMAX_SIMD_INLINE void accumulate_block(float* acc, FV c, const float* p, int n, const float* v,
                                          int64_t stride) {
  FV a[NV];
#pragma GCC unroll 8
  for (int k = 0; k < NV; ++k) a[k] = F::mul(F::load(acc + k * kF), c);
  for (int i = 0; i < n; ++i) {
    const FV pi = F::set1(p[i]);
    const float* vi = v + i * stride;
#pragma GCC unroll 8
    for (int k = 0; k < NV; ++k) a[k] = F::fmadd(pi, F::load(vi + k * kF), a[k]);
  }
#pragma GCC unroll 8
  for (int k = 0; k < NV; ++k) F::store(acc + k * kF, a[k]);
}

// acc[0, d) ← acc·corr + Σ_{i<n} p[i]·v_i, v_i at v + i·stride: eight (then four) vectors of acc
// per pass over the tile's V rows, then single vectors.
MINIMAX_SIMD_INLINE void accumulate(float* acc, float corr, const float* p, int n, const float* v,
                                    int64_t stride, int64_t d) {
  const FV c = F::set1(corr);
  int64_t col = 0;
  for (; col + 8 * kF <= d; col += 8 * kF) accumulate_block<8>(acc + col, c, p, n, v + col, stride);
  if (col + 4 * kF <= d) {
    accumulate_block<4>(acc + col, c, p, n, v + col, stride);
    col += 4 * kF;
  }
  for (; col < d; col += kF) {
    const int width = static_cast<int>(std::min<int64_t>(kF, d - col));
    FV a = F::mul(width == kF ? F::load(acc + col) : F::load_n(acc + col, width), c);
    for (int i = 0; i < n; ++i) {
      const float* vi = v + i * stride + col;
      a = F::fmadd(F::set1(p[i]), width == kF ? F::load(vi) : F::load_n(vi, width), a);
    }
    if (width == kF) {
      F::store(acc + col, a);
    } else {
      F::store_n(acc + col, a, width);
    }
  }
}

// The storage row of slot s of a paged job.
MINIMAX_SIMD_INLINE int64_t paged_row(const int32_t* page_table, int64_t page_size, int64_t s) {
  return int64_t(page_table[s / page_size]) * page_size + s % page_size;
}

#if MINIMAX_SIMD_LEVEL == 2
#include "kernels/cpu/attention_avx512_decode-inl.h"
#endif

// Widens bf16 r[i0, n) to f32 in vector registers (a shift into the high half); returns the
// first element left for the scalar tail.
MINIMAX_SIMD_INLINE int64_t widen_bf16(const uint16_t* r, int64_t n, float* out) {
  int64_t i = 0;
#if MINIMAX_SIMD_LEVEL == 2
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, bf16_to_f32_16(r + i));
#elif MINIMAX_SIMD_LEVEL == 1
  for (; i + 8 <= n; i += 8) {
    const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)(r + i)));
    _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(h, 16)));
  }
#endif
  return i;
}

// e4m3fn codes r[0, n) to f32 (kv_codec.h's table values) by bit arithmetic: a normal code
// E.M (E ≥ 1) is f32 exponent E + 120 and mantissa M << 20; a subnormal is M·2^-9; 0x7F is NaN.
// Returns the first element left for the table.
MINIMAX_SIMD_INLINE int64_t widen_fp8(const uint8_t* r, int64_t n, float* out) {
  int64_t i = 0;
#if MINIMAX_SIMD_LEVEL == 2
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, fp8_to_f32_16(r + i));
#elif MINIMAX_SIMD_LEVEL == 1
  const __m256i low7 = _mm256_set1_epi32(0x7F), bias = _mm256_set1_epi32(120 << 23);
  const __m256 sub_unit = _mm256_set1_ps(0x1p-9f), scale = _mm256_set1_ps(kFp8KvScale);
  for (; i + 8 <= n; i += 8) {
    const __m256i c = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i*)(r + i)));
    const __m256i em = _mm256_and_si256(c, low7);
    const __m256i sign = _mm256_slli_epi32(_mm256_andnot_si256(low7, c), 24);
    __m256 mag = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_slli_epi32(em, 20), bias));
    const __m256 subnormal = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(8), em));
    mag = _mm256_blendv_ps(mag, _mm256_mul_ps(_mm256_cvtepi32_ps(em), sub_unit), subnormal);
    const __m256 nan = _mm256_castsi256_ps(_mm256_cmpeq_epi32(em, low7));
    mag = _mm256_blendv_ps(mag, _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()), nan);
    const __m256 v = _mm256_castsi256_ps(_mm256_or_si256(_mm256_castps_si256(mag), sign));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(v, scale));
  }
#endif
  return i;
}

// out[0, n) = the n elements of KV storage `base` (type dtype) from element `offset` on, as floats
// (kv_codec.h's values, vector widening where the level has it, then the scalar definition).
MINIMAX_SIMD_INLINE void decode_row(const void* base, KvDtype dtype, int64_t offset, int64_t n,
                                    float* out) {
  switch (dtype) {
    case KvDtype::kF32:
      std::copy_n(static_cast<const float*>(base) + offset, n, out);
      return;
    case KvDtype::kBF16: {
      const uint16_t* r = static_cast<const uint16_t*>(base) + offset;
      for (int64_t i = widen_bf16(r, n, out); i < n; ++i)
        out[i] = std::bit_cast<float>(uint32_t{r[i]} << 16);
      return;
    }
    case KvDtype::kFp8E4m3: {
      const uint8_t* r = static_cast<const uint8_t*>(base) + offset;
      const float* table = fp8_kv_table();
      for (int64_t i = widen_fp8(r, n, out); i < n; ++i) out[i] = table[r[i]];
      return;
    }
  }
}

// The storage row of `slot`.
MINIMAX_SIMD_INLINE int64_t job_row(const AttendJob& j, int64_t slot) {
  return j.page_table == nullptr ? slot : paged_row(j.page_table, j.page_size, slot);
}

// Requests from memory into L2 what the job reads of the K and V rows of slots [s0, s0 + n): its
// groups' span of each row. The hardware prefetchers follow these short pieces at a fixed stride
// badly: without this, waiting for them was most of a 32K-slot decode attention's time.
MINIMAX_SIMD_INLINE void prefetch_tile(const AttendJob& j, int64_t s0, int n) {
  const int64_t bytes = j.groups * j.head_dim * kv_dtype_bytes(j.dtype);
  for (int i = 0; i < n; ++i) {
    const int64_t element = job_row(j, s0 + i) * j.cache_stride;
    const char* k = static_cast<const char*>(kv_element(j.k, j.dtype, element));
    const char* v = static_cast<const char*>(kv_element(j.v, j.dtype, element));
    for (int64_t b = 0; b < bytes; b += 64) {
      _mm_prefetch(k + b, _MM_HINT_T1);
      _mm_prefetch(v + b, _MM_HINT_T1);
    }
  }
}

// What attend() carries from tile to tile, carved from its scratch: per query head the output
// accumulator [heads, d], the current tile's scores [heads, kAttendTile], the running max and the
// softmax denominator; and [kAttendTile, d] rows of K and V for a tile that had to be gathered
// from pages or decoded from bf16 / fp8.
struct SoftmaxState {
  float* acc;
  float* scores;
  float* running_max;
  float* denom;
  float* gathered_k;
  float* gathered_v;
};

// One tile: slots [s0, s0 + n) for the query heads [h0, h1), which share the KV head at element
// offset `group` of each cache row.
struct TileSpan {
  int64_t group;
  int64_t s0;
  int n;
  int h0, h1;
};

#if MINIMAX_SIMD_LEVEL == 2
#include "kernels/cpu/attention_avx512_tiles-inl.h"
#endif

// One tile: its scores, then each head's online-softmax update of the state.
MINIMAX_SIMD_INLINE void attend_tile(const AttendJob& j, const TileSpan& t, SoftmaxState& st) {
  const int64_t d = j.head_dim;
  const int64_t group = t.group, s0 = t.s0;
  const int n = t.n;
#if MINIMAX_SIMD_LEVEL == 2
  if (d == kRowDim && n == kAttendTile) {
    switch (j.dtype) {
      case KvDtype::kF32:
        return attend_tile_rows<KvDtype::kF32>(j, t, st);
      case KvDtype::kBF16:
        return attend_tile_rows<KvDtype::kBF16>(j, t, st);
      case KvDtype::kFp8E4m3:
        return attend_tile_rows<KvDtype::kFp8E4m3>(j, t, st);
    }
  }
#endif
  const int padded = (n + kF - 1) / kF * kF;
  const void* kb = kv_element(j.k, j.dtype, group);
  const void* vb = kv_element(j.v, j.dtype, group);
  const float* k;
  const float* v;
  int64_t stride = j.cache_stride;
  const bool one_page = j.page_table == nullptr || s0 % j.page_size + n <= j.page_size;
  if (one_page && j.dtype == KvDtype::kF32) {  // read the tile in place
    const int64_t row = job_row(j, s0);
    k = static_cast<const float*>(kb) + row * stride;
    v = static_cast<const float*>(vb) + row * stride;
  } else {  // same values, same order, so the same bits as the contiguous f32 tile
    for (int i = 0; i < n; ++i) {
      const int64_t row = job_row(j, s0 + i);
      decode_row(kb, j.dtype, row * stride, d, st.gathered_k + i * d);
      decode_row(vb, j.dtype, row * stride, d, st.gathered_v + i * d);
    }
    k = st.gathered_k;
    v = st.gathered_v;
    stride = d;
  }
  for (int h = t.h0; h < t.h1; ++h) {
    const float* q = j.q + h * d;
    float* sc = st.scores + h * kAttendTile;
    int i = 0;
    for (; i + 4 <= n; i += 4) dot4(q, k + i * stride, stride, d, sc + i);
    for (; i < n; ++i) sc[i] = dot(q, k + i * stride, d);
    for (i = 0; i < n; ++i) sc[i] *= j.scale;
    for (; i < padded; ++i) sc[i] = -std::numeric_limits<float>::infinity();
  }
  for (int h = t.h0; h < t.h1; ++h) {
    float* sc = st.scores + h * kAttendTile;
    const float corr = online_softmax(sc, n, padded, st.running_max[h], st.denom[h]);
    accumulate(st.acc + h * d, corr, sc, n, v, stride, d);
  }
}

// Moves a job to its next non-empty range (range = num_ranges when none is left).
MINIMAX_SIMD_INLINE void next_range(const AttendJob& j, int& range, int64_t& tile) {
  while (++range < j.num_ranges && j.ranges[range].begin >= j.ranges[range].end) {
  }
  if (range < j.num_ranges) tile = j.ranges[range].begin;
}

// The jobs' shared scratch (a gathered tile), then each job's state (attend_scratch_floats).
MINIMAX_SIMD void attend(const AttendJob* jobs, int count, float* scratch) {
  const int heads = jobs[0].heads, group_heads = jobs[0].heads / jobs[0].groups;
  const int64_t d = jobs[0].head_dim;
  float* const gathered_k = scratch;
  float* const gathered_v = gathered_k + kAttendTile * d;
  float* state = gathered_v + kAttendTile * d;
  SoftmaxState st[kAttendTokens];
  int range[kAttendTokens];  // each job's current range, and the start of its next tile there
  int64_t next_tile[kAttendTokens];
  count = std::min(count, kAttendTokens);
  for (int i = 0; i < count; ++i) {
    st[i].acc = state;
    st[i].scores = st[i].acc + heads * d;
    st[i].running_max = st[i].scores + heads * kAttendTile;
    st[i].denom = st[i].running_max + heads;
    state = st[i].denom + heads;
    st[i].gathered_k = gathered_k;  // used within one tile only, so shared
    st[i].gathered_v = gathered_v;
    std::fill(st[i].acc, st[i].acc + heads * d, 0.0f);
    std::fill(st[i].running_max, st[i].running_max + heads,
              -std::numeric_limits<float>::infinity());
    std::fill(st[i].denom, st[i].denom + heads, 0.0f);
    range[i] = -1;
    next_tile[i] = 0;
    next_range(jobs[i], range[i], next_tile[i]);
  }
  for (;;) {
    // The lowest tile start any job has next; the job whose range reaches furthest past it
    // says what to prefetch (the next tile of that range).
    int64_t s0 = std::numeric_limits<int64_t>::max(), reach = 0;
    int lead = -1;
    for (int i = 0; i < count; ++i) {
      if (range[i] >= jobs[i].num_ranges) continue;
      const int64_t end = jobs[i].ranges[range[i]].end;
      if (next_tile[i] < s0 || (next_tile[i] == s0 && end > reach))
        s0 = next_tile[i], reach = end, lead = i;
    }
    if (lead < 0) break;
    const int64_t next = s0 + kAttendTile;
    if (next < reach)
      prefetch_tile(jobs[lead], next,
                    static_cast<int>(std::min<int64_t>(kAttendTile, reach - next)));
    for (int i = 0; i < count; ++i) {
      if (range[i] >= jobs[i].num_ranges || next_tile[i] != s0) continue;
      const SlotRange r = jobs[i].ranges[range[i]];
      const int n = static_cast<int>(std::min<int64_t>(kAttendTile, r.end - s0));
      for (int g = 0; g < jobs[i].groups; ++g)
        attend_tile(jobs[i], TileSpan{g * d, s0, n, g * group_heads, (g + 1) * group_heads}, st[i]);
      next_tile[i] = next;
      if (next >= r.end) next_range(jobs[i], range[i], next_tile[i]);
    }
  }
  for (int i = 0; i < count; ++i)
    for (int h = 0; h < heads; ++h)
      for (int64_t c = 0; c < d; ++c)
        jobs[i].out[h * d + c] = st[i].acc[h * d + c] / st[i].denom[h];
}

// ---- MSA block scores -----------------------------------------------------------------------

// For kD slots (rows; repeats fill a short group) and index heads [g0, g0 + G): the exact double
// dot products, lane = slot, each lane summing c = 0, 1, ... in order as the reference does (the
// product of two f32 values is exact in double, so a fused multiply-add rounds as its add does).
template <int G>
MINIMAX_SIMD_INLINE void exact_dots(const double* qd, int dim, const float* const* rows, DV* acc) {
#pragma GCC unroll 4
  for (int g = 0; g < G; ++g) acc[g] = D::zero();
  int c = 0;
  for (; c + kD <= dim; c += kD) {
    DV kt[kD];
    D::load_transposed(rows, c, kt);
#pragma GCC unroll 8
    for (int i = 0; i < kD; ++i)
#pragma GCC unroll 4
      for (int g = 0; g < G; ++g) acc[g] = D::fmadd(D::set1(qd[g * dim + c + i]), kt[i], acc[g]);
  }
  for (; c < dim; ++c) {
    alignas(64) double lanes[kD];
    for (int s = 0; s < kD; ++s) lanes[s] = rows[s][c];
    const DV kc = D::load(lanes);
#pragma GCC unroll 4
    for (int g = 0; g < G; ++g) acc[g] = D::fmadd(D::set1(qd[g * dim + c]), kc, acc[g]);
  }
}

template <int G>
MINIMAX_SIMD void score_heads(const BlockScoreJob& j, const double* qd, int g0, float* decoded) {
  const double* q = qd + g0 * j.dim;
  for (int b = j.block_begin; b < j.block_end; ++b) {
    const int64_t first = b * j.block_size;
    const int64_t last = std::min(first + j.block_size - 1, j.last_slot);
    double best[G];
    for (int g = 0; g < G; ++g) best[g] = -std::numeric_limits<double>::infinity();
    for (int64_t s0 = first; s0 <= last; s0 += kD) {
      const int n = static_cast<int>(std::min<int64_t>(kD, last + 1 - s0));
      const float* rows[kD];
      for (int s = 0; s < kD; ++s) {
        const int64_t slot = s0 + std::min(s, n - 1);
        const int64_t row =
            j.page_table == nullptr ? slot : paged_row(j.page_table, j.page_size, slot);
        if (j.dtype == KvDtype::kF32) {
          rows[s] = static_cast<const float*>(j.k_cache) + row * j.k_stride;
        } else {  // decoded values are exact floats, so the dots stay the reference's
          decode_row(j.k_cache, j.dtype, row * j.k_stride, j.dim, decoded + s * j.dim);
          rows[s] = decoded + s * j.dim;
        }
      }
      DV acc[G];
      exact_dots<G>(q, j.dim, rows, acc);
      for (int g = 0; g < G; ++g) {
        alignas(64) double dots[kD];
        D::store(dots, acc[g]);
        // The reference's std::max(score, dot) in slot order: a NaN dot is skipped.
        for (int s = 0; s < n; ++s) best[g] = best[g] < dots[s] ? dots[s] : best[g];
      }
    }
    double* out = j.scores + int64_t(b - j.block_begin) * j.heads + g0;
    for (int g = 0; g < G; ++g) out[g] = best[g];
  }
}

MINIMAX_SIMD void block_scores(const BlockScoreJob& j, double* scratch) {
  double* qd = scratch;
  for (int64_t i = 0; i < int64_t{j.heads} * j.dim; ++i) qd[i] = j.q[i];
  // [kD, dim] floats at the end of the scratch (block_score_scratch_doubles).
  float* decoded = reinterpret_cast<float*>(scratch + block_score_scratch_doubles(j.heads, j.dim) -
                                            8 * int64_t{j.dim});
  for (int g0 = 0; g0 < j.heads; g0 += 4) {
    switch (std::min(4, j.heads - g0)) {
      case 4:
        score_heads<4>(j, qd, g0, decoded);
        break;
      case 3:
        score_heads<3>(j, qd, g0, decoded);
        break;
      case 2:
        score_heads<2>(j, qd, g0, decoded);
        break;
      default:
        score_heads<1>(j, qd, g0, decoded);
        break;
    }
  }
}

}  // namespace

const AttentionKernels& MINIMAX_ATTENTION_TABLE() {
  static const AttentionKernels table{attend, block_scores};
  return table;
}

}  // namespace minimax::cpu_ops_detail
