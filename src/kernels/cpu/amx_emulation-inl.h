// A software model of the AMX tile instructions the kernels use (ldtilecfg, tileloadd, tilestored,
// tilezero, tdpbf16ps, tilerelease), so that the AMX kernels' own code (their packing, tile
// configurations, strides and loop orders) runs and is checked against the reference on CPUs
// without AMX (AMD Zen 4, older Intel). A kernel file compiled with MINIMAX_AMX_EMULATED defined
// (linear_amx_emulated.cc and its siblings) includes this through amx_tiles-inl.h: the `_tile_*`
// names below replace the compiler's, and each thread has its own eight tiles, as each core has.
//
// tdpbf16ps follows the pseudocode of Intel's reference (Intel 64 and IA-32 Architectures Software
// Developer's Manual, vol. 2, TDPBF16PS): per result row, the even and the odd bf16 products of a
// column pair accumulate apart with fused multiply-adds, then their sum is added to the result,
// with denormal inputs read as zero and denormal results flushed to zero. The model is slow
// (scalar loops) and is only chosen on request (cpu_features.h set_amx_emulation).
#pragma once

#include <cstdint>
#include <cstring>

namespace minimax::amx_emulator {

struct Tiles {
  uint16_t colsb[8] = {};  // bytes per row of each tile (0: not configured)
  uint8_t rows[8] = {};
  alignas(64) uint8_t data[8][16][64] = {};
};

// One set per thread, shared by every emulated kernel (tile registers belong to the core).
inline thread_local Tiles tiles;

inline void configure(const uint16_t (&colsb)[8], const uint8_t (&rows)[8]) {
  for (int t = 0; t < 8; ++t) {
    tiles.colsb[t] = colsb[t];
    tiles.rows[t] = rows[t];
  }
  std::memset(tiles.data, 0, sizeof tiles.data);  // ldtilecfg zeroes every tile
}

inline void release() { configure({}, {}); }

inline void load(int t, const void* base, int64_t stride) {
  std::memset(tiles.data[t], 0, sizeof tiles.data[t]);
  for (int r = 0; r < tiles.rows[t]; ++r)
    std::memcpy(tiles.data[t][r], static_cast<const uint8_t*>(base) + r * stride, tiles.colsb[t]);
}

// `base` as the instruction takes it: an address (some kernels hold it through a const view).
inline void store(int t, const void* base, int64_t stride) {
  auto* out = static_cast<uint8_t*>(const_cast<void*>(base));
  for (int r = 0; r < tiles.rows[t]; ++r)
    std::memcpy(out + r * stride, tiles.data[t][r], tiles.colsb[t]);
}

inline void zero(int t) { std::memset(tiles.data[t], 0, sizeof tiles.data[t]); }

// Denormals (and their sign) to zero, as the tile unit reads and writes them.
inline float flush(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  if ((bits & 0x7F800000u) == 0) bits &= 0x80000000u;
  std::memcpy(&v, &bits, 4);
  return v;
}

inline float bf16_at(const uint8_t* row, int i) {
  uint16_t h;
  std::memcpy(&h, row + 2 * i, 2);
  const uint32_t bits = uint32_t{h} << 16;
  float v;
  std::memcpy(&v, &bits, 4);
  return flush(v);
}

// C (m × n f32) += A (m × k bf16 pairs) · B (k rows × n bf16 pairs).
inline void dpbf16ps(int c, int a, int b) {
  const int m_rows = tiles.rows[c], n_cols = tiles.colsb[c] / 4, k_pairs = tiles.colsb[a] / 4;
  float bv[16][32];  // B as floats once (sanitizer builds run these loops slowly)
  for (int k = 0; k < k_pairs; ++k)
    for (int j = 0; j < 2 * n_cols; ++j) bv[k][j] = bf16_at(tiles.data[b][k], j);
  for (int m = 0; m < m_rows; ++m) {
    float even[16] = {}, odd[16] = {};
    for (int k = 0; k < k_pairs; ++k) {
      const float a0 = bf16_at(tiles.data[a][m], 2 * k), a1 = bf16_at(tiles.data[a][m], 2 * k + 1);
      for (int n = 0; n < n_cols; ++n) {
        even[n] = flush(__builtin_fmaf(a0, bv[k][2 * n], even[n]));
        odd[n] = flush(__builtin_fmaf(a1, bv[k][2 * n + 1], odd[n]));
      }
    }
    for (int n = 0; n < n_cols; ++n) {
      float acc;
      std::memcpy(&acc, tiles.data[c][m] + 4 * n, 4);
      acc = flush(flush(acc) + flush(even[n] + odd[n]));
      std::memcpy(tiles.data[c][m] + 4 * n, &acc, 4);
    }
  }
}

}  // namespace minimax::amx_emulator

// The compiler's tile intrinsics are macros around inline assembly; these take their place.
#undef _tile_loadd
#undef _tile_stream_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbf16ps
#undef _tile_release
#define _tile_loadd(t, base, stride) ::minimax::amx_emulator::load(t, base, stride)
#define _tile_stream_loadd(t, base, stride) ::minimax::amx_emulator::load(t, base, stride)
#define _tile_stored(t, base, stride) ::minimax::amx_emulator::store(t, base, stride)
#define _tile_zero(t) ::minimax::amx_emulator::zero(t)
#define _tile_dpbf16ps(c, a, b) ::minimax::amx_emulator::dpbf16ps(c, a, b)
#define _tile_release() ::minimax::amx_emulator::release()
