// e4m3fn decoding shared by the FP8 kernels and the NVFP4 scale decoding: two vpermt2b lookups
// give the low and high bytes of each code's bf16 value (exact for every code, NaN included).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "kernels/cpu/linear_avx512-inl.h"

namespace minimax::cpu_linear_detail {
namespace {

inline float load_f32(const void* base, int64_t index) {
  float v;
  std::memcpy(&v, static_cast<const uint8_t*>(base) + 4 * index, 4);
  return v;
}

// The 128-entry tables in four registers.
struct E4m3Tables512 {
  __m512i lo0, lo1, hi0, hi1;
  MINIMAX_AVX512 E4m3Tables512() {
    const DecodeTables& t = decode_tables();
    lo0 = _mm512_load_si512(t.e4m3_bf16_lo);
    lo1 = _mm512_load_si512(t.e4m3_bf16_lo + 64);
    hi0 = _mm512_load_si512(t.e4m3_bf16_hi);
    hi1 = _mm512_load_si512(t.e4m3_bf16_hi + 64);
  }
  // 64 codes -> bf16 pairs: pairs[s] lane L holds codes 16L + 8s + (0..7), in order. (Placing
  // the bytes straight into f32 lanes with four more vpermt2b instead of unpacking and shifting
  // measured 25% slower: port 5 is the bottleneck.)
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void pairs(__m512i codes, __m512i* out) const {
    const __m512i lo = _mm512_permutex2var_epi8(lo0, codes, lo1);  // index bit 7 (sign) ignored
    __m512i hi = _mm512_permutex2var_epi8(hi0, codes, hi1);
    hi = _mm512_ternarylogic_epi32(hi, codes, _mm512_set1_epi8(char(0x80)), 0xF8);  // hi | sign
    out[0] = _mm512_unpacklo_epi8(lo, hi);
    out[1] = _mm512_unpackhi_epi8(lo, hi);
  }
  // f32 bits of the code in byte 3 of each dword of `spread` (the same code also in byte 2; other
  // bytes are ignored).
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE __m512 dword_values(__m512i spread) const {
    const __m512i lo = _mm512_maskz_permutex2var_epi8(0x4444444444444444ull, lo0, spread, lo1);
    const __m512i hi = _mm512_maskz_permutex2var_epi8(0x8888888888888888ull, hi0, spread, hi1);
    const __m512i sign = _mm512_and_si512(spread, _mm512_set1_epi32(int32_t(0x80000000u)));
    return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(lo, hi, sign, 0xFE));  // lo | hi | sign
  }
};

// The column order of pairs(): vector s holds the pairs of the low (s = 0) or high unpack; word
// 2(4L + d) + h of it is code 16L + 8s + 2d + h. A chunk of kCols columns is kCols / 64 such pieces
// in turn.
template <int kCols>
const uint16_t* fp8_order_bf16x() {
  static const auto order = [] {
    std::array<uint16_t, kCols> o{};
    for (int piece = 0; piece < kCols; piece += 64)
      for (int s = 0; s < 2; ++s)
        for (int lane = 0; lane < 4; ++lane)
          for (int d = 0; d < 4; ++d)
            for (int h = 0; h < 2; ++h)
              o[piece + 32 * s + 8 * lane + 2 * d + h] =
                  static_cast<uint16_t>(piece + 16 * lane + 8 * s + 2 * d + h);
    return o;
  }();
  return order.data();
}

// 64 e4m3 codes -> bf16 in column order: v[0] codes 0-31, v[1] codes 32-63.
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void e4m3_to_bf16(const E4m3Tables512& tables, __m512i codes,
                                                       __m512i* v) {
  // pairs() leaves codes 16L + (0..7) in lane L of vector 0 and 16L + (8..15) in vector 1.
  __m512i p[2];
  tables.pairs(codes, p);
  v[0] = _mm512_permutex2var_epi64(p[0], _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), p[1]);
  v[1] = _mm512_permutex2var_epi64(p[0], _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15), p[1]);
}

// 64 codes from p, zeros past the first `left` (which may be 0 or less).
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE __m512i load_codes(const uint8_t* p, int64_t left) {
  return left >= 64
             ? _mm512_loadu_si512(p)
             : _mm512_maskz_loadu_epi8(_bzhi_u64(~0ull, unsigned(std::max<int64_t>(left, 0))), p);
}

// Codes [0, width) of an e4m3 row, `valid` of them real (zeros past them), -> bf16 in column
// order at dst (width a multiple of 64, dst 64-byte aligned): the FP8 panels of both batch GEMMs.
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void e4m3_row_to_bf16(const E4m3Tables512& tables,
                                                           const uint8_t* src, int64_t valid,
                                                           int64_t width, uint16_t* dst) {
  for (int64_t c = 0; c < width; c += 64) {
    __m512i v[2];
    e4m3_to_bf16(tables, load_codes(src + c, valid - c), v);
    _mm512_store_si512(dst + c, v[0]);
    _mm512_store_si512(dst + c + 32, v[1]);
  }
}

// Where an FP8 row's scales come from: per row, per tile, or an e8m0 per 32 columns (MXFP8).
enum class Fp8Scaling { kChannel, kTile, kMx };

// Where each scale of an FP8 row comes from: the row's own (channel) or its tile's (block).
// Tile sides that are powers of two (the published 128) index with shifts: a division per chunk
// and row cost as much as the chunk's decode.
struct Fp8Scales {
  const void* scales;
  int64_t scale_cols;  // floats from one tile row of scales to the next (block)
  int block_rows, block_cols;
  int row_shift, col_shift;  // log2 of the tile sides, or -1 when not a power of two
  explicit Fp8Scales(const WeightView& w)
      : scales(w.scales),
        scale_cols(weight_scale_stride(w) / 4),
        block_rows(w.block_rows),
        block_cols(w.block_cols),
        row_shift(log2_of(w.block_rows)),
        col_shift(log2_of(w.block_cols)) {}
  static int log2_of(int v) {
    return v > 0 && (v & (v - 1)) == 0 ? std::countr_zero(unsigned(v)) : -1;
  }
  float tile(int64_t row, int64_t col) const {
    const int64_t tile_row = row_shift >= 0 ? row >> row_shift : row / block_rows;
    const int64_t tile_col = col_shift >= 0 ? col >> col_shift : col / block_cols;
    return load_f32(scales, tile_row * scale_cols + tile_col);
  }
  float channel(int64_t row) const { return load_f32(scales, row); }
};

// The e8m0 scale bytes of an MX row (kMxfp8: one per 32 columns) and their values.
struct MxScales {
  const uint8_t* scales;
  int64_t stride;     // bytes from one row of scales to the next
  const float* e8m0;  // code -> 2^(code - 127), 0xFF -> NaN
  explicit MxScales(const WeightView& w)
      : scales(static_cast<const uint8_t*>(w.scales)),
        stride(weight_scale_stride(w)),
        e8m0(decode_tables().e8m0) {}
  const uint8_t* row(int64_t r) const { return scales + r * stride; }
  float value(uint8_t code) const { return e8m0[code]; }
};

// The scales of a 64-column AVX-512 FP8 chunk for the bf16-activation decoder: the chunk's tile
// (kTile), or (kMx) the e8m0 values of its two 32-column blocks in dwords 0-7 and 8-15, where
// that decode order puts each block's columns (a tail of 32 has only the first); and
// the row's own scale (kChannel), which multiplies its final sum.
template <Fp8Scaling kScaling>
struct Fp8ChunkScales {
  Fp8Scales scales;
  MxScales mx;
  explicit Fp8ChunkScales(const WeightView& w) : scales(w), mx(w) {}
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE __m512 chunk(int64_t row, int64_t c, int valid) const {
    if constexpr (kScaling == Fp8Scaling::kMx) {
      const uint8_t* codes = mx.row(row) + c * 2;
      const float second = !kTail || valid > 32 ? mx.value(codes[1]) : 0.0f;
      return _mm512_insertf32x8(_mm512_set1_ps(mx.value(codes[0])), _mm256_set1_ps(second), 1);
    } else {
      return _mm512_set1_ps(scales.tile(row, c * 64));
    }
  }
  float row_scale(int64_t row) const {
    return kScaling == Fp8Scaling::kChannel ? scales.channel(row) : 1.0f;
  }
};

}  // namespace
}  // namespace minimax::cpu_linear_detail
