// Decoding shared by the MXFP4 and NVFP4 kernels: packed e2m1 elements (element 2i in the low
// nibble of byte i) and the vector forms of their block scales.
#pragma once

#include <array>
#include <cstring>

#include "kernels/cpu/linear_avx2-inl.h"
#include "kernels/cpu/linear_avx512-inl.h"
#include "kernels/cpu/linear_fp8-inl.h"

namespace minimax::cpu_linear_detail {
namespace {

// AVX-512, f32 activations: 64 bytes (128 columns) per chunk. vpermps looks the low 4 bits of every
// dword up in a 16-entry f32 table, so the dwords shifted right by 4v give vector v = the elements
// 8j + v (j = dword index). Element column 8j + v sits at position 16v + j.
struct Fp4Elements512 {
  __m512 table;
  MINIMAX_AVX512 Fp4Elements512() : table(_mm512_load_ps(decode_tables().e2m1)) {}
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void decode(const uint8_t* p, int64_t ahead_bytes,
                                                   int valid_cols, __m512* w) const {
    prefetch512<kTail>(p, ahead_bytes);
    const __m512i bytes =
        kTail ? _mm512_maskz_loadu_epi8(first_bytes(valid_cols / 2), p) : _mm512_loadu_si512(p);
    w[0] = _mm512_permutexvar_ps(bytes, table);
#pragma GCC unroll 8
    for (int v = 1; v < 8; ++v)
      w[v] = _mm512_permutexvar_ps(_mm512_srli_epi32(bytes, 4 * v), table);
  }
};

inline const uint16_t* fp4_order_avx512() {
  static const auto order = [] {
    std::array<uint16_t, 128> o{};
    for (int v = 0; v < 8; ++v)
      for (int j = 0; j < 16; ++j) o[16 * v + j] = static_cast<uint16_t>(8 * j + v);
    return o;
  }();
  return order.data();
}

// AVX-512, bf16 activations: 64 bytes (128 columns) per chunk. vpshufb looks each nibble up in
// 16-entry tables of the low and high bytes of its bf16 value and unpacking interleaves them into
// bf16 pairs: vector v = 2n + s (n: low/high nibble, s: low/high unpack), lane L, dword d, half h
// holds column 32L + 16s + 4d + 2h + n, at position 32v + 8L + 2d + h.
struct Fp4Pairs512 {
  __m512i lo_table, hi_table;
  MINIMAX_AVX512 Fp4Pairs512()
      : lo_table(_mm512_broadcast_i32x4(
            _mm_load_si128(reinterpret_cast<const __m128i*>(decode_tables().e2m1_bf16_lo)))),
        hi_table(_mm512_broadcast_i32x4(
            _mm_load_si128(reinterpret_cast<const __m128i*>(decode_tables().e2m1_bf16_hi)))) {}
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void decode(const uint8_t* p, int64_t ahead_bytes,
                                                   int valid_cols, __m512i* w) const {
    prefetch512<kTail>(p, ahead_bytes);
    const __m512i bytes =
        kTail ? _mm512_maskz_loadu_epi8(first_bytes(valid_cols / 2), p) : _mm512_loadu_si512(p);
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i nibbles[2] = {_mm512_and_si512(bytes, low4),
                                _mm512_and_si512(_mm512_srli_epi16(bytes, 4), low4)};
#pragma GCC unroll 2
    for (int n = 0; n < 2; ++n) {
      const __m512i lo = _mm512_shuffle_epi8(lo_table, nibbles[n]);
      const __m512i hi = _mm512_shuffle_epi8(hi_table, nibbles[n]);
      w[2 * n] = _mm512_unpacklo_epi8(lo, hi);
      w[2 * n + 1] = _mm512_unpackhi_epi8(lo, hi);
    }
  }
};

inline const uint16_t* fp4_order_bf16x() {
  static const auto order = [] {
    std::array<uint16_t, 128> o{};
    for (int n = 0; n < 2; ++n)
      for (int s = 0; s < 2; ++s)
        for (int lane = 0; lane < 4; ++lane)
          for (int d = 0; d < 4; ++d)
            for (int h = 0; h < 2; ++h)
              o[32 * (2 * n + s) + 8 * lane + 2 * d + h] =
                  static_cast<uint16_t>(32 * lane + 16 * s + 4 * d + 2 * h + n);
    return o;
  }();
  return order.data();
}

// MXFP4 scales of one 128-column chunk (`blocks` of its 4 present): dword j = 2^(code[j/4] - 127),
// with 0x00 -> 2^-127 (subnormal) and 0xFF -> NaN as formats/ decodes e8m0. In both AVX-512
// layouts dword j of every vector holds columns of block j / 4. Codes 0x01..0xFE are the exponent
// bits of their f32 value; the two others, never seen in real checkpoints, take a slower branch
// (checked with scalar instructions, which do not compete with the vector ports).
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE __m512 mxfp4_scales512(const uint8_t* codes, size_t blocks) {
  uint32_t packed = 0;
  std::memcpy(&packed, codes, blocks);
  const __m512i e = _mm512_maskz_permutexvar_epi8(
      0x1111111111111111ull, _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0),
      _mm512_castsi128_si512(_mm_cvtsi32_si128(static_cast<int>(packed))));
  __m512i bits = _mm512_slli_epi32(e, 23);
  const uint32_t present = blocks >= 4 ? ~0u : (1u << (8 * blocks)) - 1;
  auto has_byte = [](uint32_t v, uint32_t byte) {  // any byte of v equal to `byte`
    const uint32_t z = v ^ (0x01010101u * byte);
    return ((z - 0x01010101u) & ~z & 0x80808080u) != 0;
  };
  if (__builtin_expect(has_byte(packed | ~present, 0x00) || has_byte(packed & present, 0xFF), 0)) {
    bits = _mm512_mask_mov_epi32(bits, _mm512_cmpeq_epi32_mask(e, _mm512_setzero_si512()),
                                 _mm512_set1_epi32(0x00400000));
    bits = _mm512_mask_mov_epi32(bits, _mm512_cmpeq_epi32_mask(e, _mm512_set1_epi32(0xFF)),
                                 _mm512_set1_epi32(0x7FC00000));
  }
  return _mm512_castsi512_ps(bits);
}

// Byte-spread index for nvfp4_scales512: dword j = block(j) · 0x01010000 with
// block(j) = (j / per) · step + offset. Built once per kernel call.
MINIMAX_AVX512 inline __m512i spread_index512(int per, int step, int offset) {
  alignas(64) uint32_t index[16];
  for (int j = 0; j < 16; ++j)
    index[j] = static_cast<uint32_t>((j / per) * step + offset) * 0x01010000u;
  return _mm512_load_si512(index);
}

// NVFP4 scales of one chunk (`blocks` of its 8 present): dword j = e4m3(code[block(j)]), where
// `spread` (from spread_index512) names block(j) in bytes 2 and 3 of dword j. (The global scale
// multiplies each row's final sum instead: one multiply per row, not per chunk.)
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE __m512 nvfp4_scales512(const E4m3Tables512& tables,
                                                            const uint8_t* codes, size_t blocks,
                                                            __m512i spread) {
  uint64_t packed = 0;
  std::memcpy(&packed, codes, blocks);
  const __m512i placed = _mm512_maskz_permutexvar_epi8(
      0xCCCCCCCCCCCCCCCCull, spread,
      _mm512_castsi128_si512(_mm_cvtsi64_si128(static_cast<long long>(packed))));
  return tables.dword_values(placed);
}

// AVX2: 32 bytes (64 columns) per chunk. vpshufb looks each nibble up in 16-entry tables of the
// low and high bytes of its bf16 value; unpacking interleaves them into bf16 pairs and a shift or
// mask makes f32 of each half. Vector v = 4n + 2s + q (n: low/high nibble, s: low/high unpack,
// q: even/odd half), lane L, dword d holds column 32L + 16s + 4d + 2q + n (fp4_order_avx2).
// kEvenOdd: the bytes are first moved so that byte 8g + l (g = 2s + q, l = 4L + d) lands where
// that lane reads, and the vector goes to w[2g + n]: the even (n = 0) and odd columns of each
// 16-column group g, the shared f32 order (even_odd_order, linear_internal.h).
template <bool kEvenOdd>
struct Fp4Decoder256 {
  __m256i lo_table, hi_table;
  MINIMAX_AVX2 Fp4Decoder256()
      : lo_table(_mm256_broadcastsi128_si256(
            _mm_load_si128(reinterpret_cast<const __m128i*>(decode_tables().e2m1_bf16_lo)))),
        hi_table(_mm256_broadcastsi128_si256(
            _mm_load_si128(reinterpret_cast<const __m128i*>(decode_tables().e2m1_bf16_hi)))) {}
  template <bool kTail>
  MINIMAX_AVX2 MINIMAX_ALWAYS_INLINE void decode(const uint8_t* p, int valid_cols,
                                                 __m256* w) const {
    prefetch256<kTail>(p);
    __m256i bytes;
    if constexpr (kTail) {
      const TailBuffer<32> tail(p, valid_cols / 2);
      bytes = _mm256_load_si256(reinterpret_cast<const __m256i*>(tail.bytes));
    } else {
      bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    }
    if constexpr (kEvenOdd) {
      // Lane L takes dwords L, 2 + L, 4 + L, 6 + L (bytes 8m + 4L + d, m = 0..3); in-lane position
      // 8s + 2d + q then takes byte d of its dword m = 2s + q.
      bytes = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
      bytes = _mm256_shuffle_epi8(
          bytes, _mm256_setr_epi8(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15, 0, 4, 1, 5,
                                  2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15));
    }
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const __m256i nibbles[2] = {_mm256_and_si256(bytes, low4),
                                _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4)};
    const __m256i high_half = _mm256_set1_epi32(int32_t(0xFFFF0000u));
#pragma GCC unroll 2
    for (int n = 0; n < 2; ++n) {
      const __m256i lo = _mm256_shuffle_epi8(lo_table, nibbles[n]);
      const __m256i hi = _mm256_shuffle_epi8(hi_table, nibbles[n]);
      const __m256i pairs[2] = {_mm256_unpacklo_epi8(lo, hi), _mm256_unpackhi_epi8(lo, hi)};
#pragma GCC unroll 2
      for (int s = 0; s < 2; ++s) {
        const int even = kEvenOdd ? 2 * (2 * s) + n : 4 * n + 2 * s;
        const int odd = kEvenOdd ? 2 * (2 * s + 1) + n : 4 * n + 2 * s + 1;
        w[even] = _mm256_castsi256_ps(_mm256_slli_epi32(pairs[s], 16));
        w[odd] = _mm256_castsi256_ps(_mm256_and_si256(pairs[s], high_half));
      }
    }
  }
};
using Fp4Elements256 = Fp4Decoder256<false>;
using Fp4EvenOdd256 = Fp4Decoder256<true>;

inline const uint16_t* fp4_order_avx2() {
  static const auto order = [] {
    std::array<uint16_t, 64> o{};
    for (int n = 0; n < 2; ++n)
      for (int s = 0; s < 2; ++s)
        for (int q = 0; q < 2; ++q)
          for (int lane = 0; lane < 2; ++lane)
            for (int d = 0; d < 4; ++d)
              o[8 * (4 * n + 2 * s + q) + 4 * lane + d] =
                  static_cast<uint16_t>(32 * lane + 16 * s + 4 * d + 2 * q + n);
    return o;
  }();
  return order.data();
}

}  // namespace
}  // namespace minimax::cpu_linear_detail
