// What the AMX kernels (linear_amx.cc, attention_amx.cc) share: the tile configuration (all eight
// tiles 16 rows of 64 bytes), a compiler fence for the tile loads and stores, and a 16 × 16 dword
// transpose. Included only by .cc files whose target comes from amx_target.h; where they are
// compiled against the tile emulator (MINIMAX_AMX_EMULATED), the emulator's tiles stand in.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#ifndef MINIMAX_AMX_TILES
#error "include amx_target.h before amx_tiles-inl.h"
#endif
#ifdef MINIMAX_AMX_EMULATED
#include "kernels/cpu/amx_emulation-inl.h"
#endif
#ifndef MINIMAX_AVX512
#define MINIMAX_AVX512 __attribute__((target(MINIMAX_AVX512_TARGET)))
#endif
#ifndef MINIMAX_ALWAYS_INLINE
#define MINIMAX_ALWAYS_INLINE inline __attribute__((always_inline))
#endif

namespace minimax::amx_detail {
namespace {

constexpr int kTileM = 16;        // rows of every tile
constexpr int kTileDwords = 256;  // one 16 × 64-byte tile

struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tile i: 16 rows of colsb[i] bytes.
MINIMAX_AVX512 inline void load_tile_config(const uint16_t (&colsb)[8]) {
  TileConfig c;
  for (int i = 0; i < 8; ++i) {
    c.colsb[i] = colsb[i];
    c.rows[i] = kTileM;
  }
#ifdef MINIMAX_AMX_EMULATED
  uint8_t rows[8];
  std::memcpy(rows, c.rows, sizeof rows);
  amx_emulator::configure(colsb, rows);
#else
  // The whole struct as the operand (the intrinsic names only its first 8 bytes).
  __asm__ volatile("ldtilecfg %0" ::"m"(c));
#endif
}
MINIMAX_AVX512 inline void load_tile_config() {
  load_tile_config({64, 64, 64, 64, 64, 64, 64, 64});
}

// Tile loads are asm statements without a memory clobber: this keeps the compiler from moving
// the stores of a panel or of packed activations past them.
inline void compiler_barrier() { __asm__ volatile("" ::: "memory"); }

// out[j] lane i = r[i] lane j (16 × 16 dwords).
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void transpose16(__m512 (&r)[16]) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // Now r[4i + e], 128-bit lane L: rows 4i..4i+3, element 4L + e.
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
  }
  __m512 out[16];
#pragma GCC unroll 4
  for (int e = 0; e < 4; ++e) {
    const __m512 ab_lo = _mm512_shuffle_f32x4(r[e], r[4 + e], 0x44);
    const __m512 ab_hi = _mm512_shuffle_f32x4(r[e], r[4 + e], 0xEE);
    const __m512 cd_lo = _mm512_shuffle_f32x4(r[8 + e], r[12 + e], 0x44);
    const __m512 cd_hi = _mm512_shuffle_f32x4(r[8 + e], r[12 + e], 0xEE);
    out[e] = _mm512_shuffle_f32x4(ab_lo, cd_lo, 0x88);
    out[4 + e] = _mm512_shuffle_f32x4(ab_lo, cd_lo, 0xDD);
    out[8 + e] = _mm512_shuffle_f32x4(ab_hi, cd_hi, 0x88);
    out[12 + e] = _mm512_shuffle_f32x4(ab_hi, cd_hi, 0xDD);
  }
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) r[i] = out[i];
}

}  // namespace
}  // namespace minimax::amx_detail
