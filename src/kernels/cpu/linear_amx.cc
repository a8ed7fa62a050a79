// The batch (prefill) linear on AMX tiles (Intel Sapphire Rapids and later): tdpbf16ps multiplies a
// 16 × 32 bf16 tile of weight rows with a 32 × 16 tile of activations (packed in pairs) into a
// 16 × 16 f32 tile, 8,192 products per instruction, eight times the vdpbf16ps GEMM's peak.
//
// - The activations of a token block are rounded to bf16 (kSplit: hi and lo planes, as the
//   vdpbf16ps GEMM) and packed into tiles once per call.
// - Every 32 weight rows are decoded once per token block into a bf16 panel: exactly for bf16, FP8
//   per channel (the row scale multiplies the sums), MXFP8, MXFP4 and NVFP4 (the e8m0 / e4m3 block
//   scale times an e4m3 / e2m1 element is a bf16 in range, see docs/cpu_kernels.md; NVFP4's
//   global scale multiplies the sums). An FP8 tile scale is an arbitrary f32: FP8 tiles 64k wide
//   decode exactly and their scale multiplies the sums of each tile's columns as they leave the
//   tile registers; other tile widths decode w · scale split into bf16 hi + lo (within 2^-16 of
//   it), and both meet the activations.
// - Loops: token blocks, column chunks (the 32-row panel chunk, 32 KiB, stays in L1; the chunk's
//   packed activations in L2), row panels, token tile pairs. Two row tiles × two token tiles of
//   results stay in the tile registers over a chunk and in a buffer between chunks.
#define MINIMAX_AVX512_TARGET \
  "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512bf16,fma,f16c,bmi,bmi2,amx-tile,amx-bf16"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/amx_tiles-inl.h"
#include "kernels/cpu/linear_avx512-inl.h"
#include "kernels/cpu/linear_bf16_split-inl.h"
#include "kernels/cpu/linear_fp8-inl.h"

namespace minimax::cpu_linear_detail {
namespace {

using amx_detail::compiler_barrier;
using amx_detail::kTileDwords;
using amx_detail::kTileM;
using amx_detail::load_tile_config;
using amx_detail::transpose16;

constexpr int kTileK = 32;              // bf16 columns of a weight tile row (64 bytes)
constexpr int kPanelRows = 2 * kTileM;  // weight rows decoded together
// Packed activations of one token block and column chunk (both planes), kept in L2 beside the
// chunk's weight panel: the tiles read both from L2 for every token tile pair / row panel.
constexpr int64_t kPackedBytes = 768 * 1024;
// A chunk of a 32-row weight panel (both planes), read from L1 by every token tile pair.
constexpr int64_t kPanelBytes = 32 * 1024;
constexpr int64_t kMaxBlockTokens = 512;

// Tile registers: results C(row tile a, token tile b) in tmm(2a + b), weights in tmm4 and tmm5,
// activations in tmm6 and tmm7. Every tile is 16 rows of 64 bytes.

// Columns [c0, c0 + width) of a token block's activations as tiles: tile (token tile b, column
// block k) holds in row j the 16 tokens' bf16 pairs of columns c0 + 32k + 2j and c0 + 32k + 2j + 1
// (zero past cols). `rows` is scratch for 16 tokens of bf16 rows (both planes).
template <bool kSplit>
MINIMAX_AVX512 void pack_activations(const float* x, int64_t n, int64_t cols, int64_t c0,
                                     int64_t width, uint16_t* rows, uint16_t* packed,
                                     int64_t plane_elems) {
  const int64_t blocks = width / kTileK, tiles = (n + kTileM - 1) / kTileM;
  const int64_t row_plane = kTileM * width;
  const int64_t valid = std::min(width, cols - c0);
  for (int64_t b = 0; b < tiles; ++b) {
    const int64_t m = std::min<int64_t>(kTileM, n - b * kTileM);
    for (int64_t i = 0; i < m; ++i)
      to_bf16_rows<kSplit>(x + (b * kTileM + i) * cols + c0, 1, valid, width, nullptr,
                           rows + i * width, row_plane);
    for (int64_t i = m; i < kTileM; ++i) {
      std::memset(rows + i * width, 0, 2 * width);
      if (kSplit) std::memset(rows + row_plane + i * width, 0, 2 * width);
    }
    for (int p = 0; p < (kSplit ? 2 : 1); ++p)
      for (int64_t k = 0; k < blocks; ++k) {
        __m512 v[16];
#pragma GCC unroll 16
        for (int t = 0; t < 16; ++t)
          v[t] = _mm512_load_ps(
              reinterpret_cast<const float*>(rows + p * row_plane + t * width + k * kTileK));
        transpose16(v);
        uint16_t* dst = packed + p * plane_elems + (b * blocks + k) * 2 * kTileDwords;
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) _mm512_store_ps(reinterpret_cast<float*>(dst + 32 * j), v[j]);
      }
  }
}

// Weight panels: row(r, c0, width, hi, lo, scale) decodes columns [c0, c0 + width) of row r (c0
// and width multiples of 64; zero past cols) to bf16: hi, and (kLo) lo = bf16(w - hi). *scale:
// what the row's sums are multiplied by.

// The f32 values of 16 weights a row's decoder produced, times nothing: to hi (+ lo) bf16.
template <bool kLo>
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void store_bf16(__m512 a, __m512 b, uint16_t* hi,
                                                     uint16_t* lo) {
  const __m512i h = round_bf16_32(a, b);
  _mm512_store_si512(hi, h);
  if constexpr (kLo) _mm512_store_si512(lo, lo_bf16_32(a, b, h));
}

MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void bf16_to_f32(__m512i v, __m512* a, __m512* b) {
  *a = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(v)), 16));
  *b = _mm512_castsi512_ps(
      _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(v, 1)), 16));
}

struct Bf16Panel {
  static constexpr bool kLo = false;
  static constexpr int kNibblesPerColumn = 4;
  const uint8_t* data;
  int64_t cols, stride;
  explicit Bf16Panel(const WeightView& w)
      : data(w.data), cols(w.cols), stride(weight_data_stride(w)) {}
  MINIMAX_AVX512 void row(int64_t r, int64_t c0, int64_t width, uint16_t* hi, uint16_t*,
                          float* scale) const {
    const uint16_t* src = reinterpret_cast<const uint16_t*>(data + r * stride) + c0;
    for (int64_t c = 0; c < width; c += 32) {
      const int64_t left = cols - c0 - c;
      const __mmask32 m =
          left >= 32 ? ~__mmask32{0} : _bzhi_u32(~0u, unsigned(std::max<int64_t>(left, 0)));
      _mm512_store_si512(hi + c, _mm512_maskz_loadu_epi16(m, src + c));
    }
    *scale = 1.0f;
  }
};

// 64 e4m3 codes -> bf16 in column order: v[0] codes 0-31, v[1] codes 32-63.
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void e4m3_to_bf16(const E4m3Tables512& tables, __m512i codes,
                                                       __m512i* v) {
  // pairs() leaves codes 16L + (0..7) in lane L of vector 0 and 16L + (8..15) in vector 1.
  __m512i p[2];
  tables.pairs(codes, p);
  v[0] = _mm512_permutex2var_epi64(p[0], _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), p[1]);
  v[1] = _mm512_permutex2var_epi64(p[0], _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15), p[1]);
}

MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE __m512i load_codes(const uint8_t* p, int64_t left) {
  return left >= 64
             ? _mm512_loadu_si512(p)
             : _mm512_maskz_loadu_epi8(_bzhi_u64(~0ull, unsigned(std::max<int64_t>(left, 0))), p);
}

// FP8 rows: per channel exact (the row scale multiplies the sums); per tile (kTile) or MXFP8
// (kMx) each value times its scale as f32, stored as hi (+ lo for kTile; an e8m0 power of two
// keeps an e4m3 value a bf16).
template <Fp8Scaling kScaling>
struct Fp8Panel {
  static constexpr bool kLo = kScaling == Fp8Scaling::kTile;
  static constexpr int kNibblesPerColumn = 2;
  const uint8_t* data;
  int64_t cols, stride;
  Fp8Scales scales;
  MxScales mx;
  E4m3Tables512 tables;
  MINIMAX_AVX512 explicit Fp8Panel(const WeightView& w)
      : data(w.data), cols(w.cols), stride(weight_data_stride(w)), scales(w), mx(w) {}
  MINIMAX_AVX512 float column_scale(int64_t r, int64_t c) const {
    if constexpr (kScaling == Fp8Scaling::kMx) return c < cols ? mx.value(mx.row(r)[c / 32]) : 0.0f;
    return c < cols ? scales.tile(r, c) : 0.0f;
  }
  MINIMAX_AVX512 void row(int64_t r, int64_t c0, int64_t width, uint16_t* hi, uint16_t* lo,
                          float* scale) const {
    const uint8_t* src = data + r * stride + c0;
    for (int64_t c = 0; c < width; c += 64) {
      __m512i v[2];
      e4m3_to_bf16(tables, load_codes(src + c, cols - c0 - c), v);
      if constexpr (kScaling == Fp8Scaling::kChannel) {
        _mm512_store_si512(hi + c, v[0]);
        _mm512_store_si512(hi + c + 32, v[1]);
      } else {
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
          __m512 a, b;
          bf16_to_f32(v[h], &a, &b);
          const int64_t at = c + 32 * h;  // in the panel; c0 + at in the row
          a = _mm512_mul_ps(a, _mm512_set1_ps(column_scale(r, c0 + at)));
          b = _mm512_mul_ps(b, _mm512_set1_ps(column_scale(r, c0 + at + 16)));
          store_bf16<kLo>(a, b, hi + at, lo + at);
        }
      }
    }
    *scale = kScaling == Fp8Scaling::kChannel ? scales.channel(r) : 1.0f;
  }
};

// FP8 tiles a multiple of 64 columns wide (the published 128 × 128): the codes decode exactly to
// bf16 (one plane, no scale) and the tile scale multiplies the partial sums of each of the row's
// column blocks (`segment_cols` wide) as they leave the tile registers. Against decoding each
// product w · scale into hi + lo bf16 (Fp8Panel<kTile>): half the decode, and two tdpbf16ps per
// product under split activations instead of three.
struct Fp8TileSumsPanel {
  static constexpr bool kLo = false;
  static constexpr bool kScaledSegments = true;
  static constexpr int kNibblesPerColumn = 2;
  const uint8_t* data;
  int64_t cols, stride, segment_cols;
  Fp8Scales scales;
  E4m3Tables512 tables;
  MINIMAX_AVX512 explicit Fp8TileSumsPanel(const WeightView& w)
      : data(w.data),
        cols(w.cols),
        stride(weight_data_stride(w)),
        segment_cols(w.block_cols),
        scales(w) {}
  MINIMAX_AVX512 void row(int64_t r, int64_t c0, int64_t width, uint16_t* hi, uint16_t*,
                          float* scale) const {
    const uint8_t* src = data + r * stride + c0;
    for (int64_t c = 0; c < width; c += 64) {
      __m512i v[2];
      e4m3_to_bf16(tables, load_codes(src + c, cols - c0 - c), v);
      _mm512_store_si512(hi + c, v[0]);
      _mm512_store_si512(hi + c + 32, v[1]);
    }
    *scale = 1.0f;
  }
  // The scale of row r's sums over the segment that starts at column c (< cols).
  float segment_scale(int64_t r, int64_t c) const { return scales.tile(r, c); }
};

// 32 e2m1 elements (16 bytes, element 2i in the low nibble of byte i) -> f32 in column order.
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void e2m1_to_f32(__m512 table, const uint8_t* p, int64_t left,
                                                      __m512* a, __m512* b) {
  const __m128i bytes =
      left >= 32
          ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))
          : _mm_maskz_loadu_epi8(
                static_cast<__mmask16>(_bzhi_u32(~0u, unsigned(std::max<int64_t>(left, 0) / 2))),
                p);
  const __m512i d = _mm512_cvtepu8_epi32(bytes);
  const __m512 even = _mm512_permutexvar_ps(d, table);  // vpermps reads the low 4 bits
  const __m512 odd = _mm512_permutexvar_ps(_mm512_srli_epi32(d, 4), table);
  *a = _mm512_permutex2var_ps(
      even, _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23), odd);
  *b = _mm512_permutex2var_ps(
      even, _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31), odd);
}

// MXFP4 (e8m0 per 32) and NVFP4 (e4m3 per 16, global scale on the sums): element times block
// scale, a bf16 (hi only).
template <bool kNv>
struct Fp4Panel {
  static constexpr bool kLo = false;
  static constexpr int kNibblesPerColumn = 1;
  const uint8_t* data;
  const uint8_t* codes;
  int64_t cols, stride, scale_stride;
  const float* scale_values;  // e4m3 or e8m0 code -> value
  float global;
  __m512 table;
  MINIMAX_AVX512 explicit Fp4Panel(const WeightView& w)
      : data(w.data),
        codes(static_cast<const uint8_t*>(w.scales)),
        cols(w.cols),
        stride(weight_data_stride(w)),
        scale_stride(weight_scale_stride(w)),
        scale_values(kNv ? decode_tables().e4m3 : decode_tables().e8m0),
        global(kNv ? w.global_scale : 1.0f),
        table(_mm512_load_ps(decode_tables().e2m1)) {}
  MINIMAX_AVX512 void row(int64_t r, int64_t c0, int64_t width, uint16_t* hi, uint16_t*,
                          float* scale) const {
    const uint8_t* src = data + r * stride;
    const uint8_t* s = codes + r * scale_stride;
    for (int64_t at = 0; at < width; at += 32) {
      const int64_t c = c0 + at;  // column in the row
      __m512 a, b;
      e2m1_to_f32(table, src + c / 2, cols - c, &a, &b);
      const bool b_valid = c + 16 < cols;
      if constexpr (kNv) {
        a = _mm512_mul_ps(a, _mm512_set1_ps(c < cols ? scale_values[s[c / 16]] : 0.0f));
        b = _mm512_mul_ps(b, _mm512_set1_ps(b_valid ? scale_values[s[c / 16 + 1]] : 0.0f));
      } else {
        const __m512 v = _mm512_set1_ps(c < cols ? scale_values[s[c / 32]] : 0.0f);
        a = _mm512_mul_ps(a, v);
        b = _mm512_mul_ps(b, v);
      }
      store_bf16<false>(a, b, hi + at, nullptr);
    }
    *scale = global;
  }
};

// The result tiles tmm(2a + b) of a row panel × token tile pair, from or to their partial sums in
// `c` (four 1 KiB tiles, a + 2b... as tile_offset says), or zero.
constexpr int64_t tile_offset(int a, int b) { return (2 * a + b) * kTileDwords; }
template <int kTokenTiles>
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void load_results(const float* c) {
  compiler_barrier();
  if (c == nullptr) {
    _tile_zero(0);
    _tile_zero(2);
    if constexpr (kTokenTiles == 2) {
      _tile_zero(1);
      _tile_zero(3);
    }
    return;
  }
  _tile_loadd(0, c + tile_offset(0, 0), 64);
  _tile_loadd(2, c + tile_offset(1, 0), 64);
  if constexpr (kTokenTiles == 2) {
    _tile_loadd(1, c + tile_offset(0, 1), 64);
    _tile_loadd(3, c + tile_offset(1, 1), 64);
  }
}
template <int kTokenTiles>
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void save_results(float* c) {
  _tile_stored(0, c + tile_offset(0, 0), 64);
  _tile_stored(2, c + tile_offset(1, 0), 64);
  if constexpr (kTokenTiles == 2) {
    _tile_stored(1, c + tile_offset(0, 1), 64);
    _tile_stored(3, c + tile_offset(1, 1), 64);
  }
  compiler_barrier();  // before anything reads `c`
}

// The result tiles' sums over one segment, each row's times its scale, into the sums `c`
// (replacing them when `first`). `tmp`: four tiles of scratch.
template <int kTokenTiles>
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void add_scaled_results(float* tmp, const float* row_scale,
                                                             bool first, float* c) {
  save_results<kTokenTiles>(tmp);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < kTokenTiles; ++b) {
      const float* t = tmp + tile_offset(a, b);
      float* d = c + tile_offset(a, b);
#pragma GCC unroll 16
      for (int i = 0; i < kTileM; ++i) {
        const __m512 v =
            _mm512_mul_ps(_mm512_load_ps(t + 16 * i), _mm512_set1_ps(row_scale[kTileM * a + i]));
        _mm512_store_ps(d + 16 * i, first ? v : _mm512_add_ps(v, _mm512_load_ps(d + 16 * i)));
      }
    }
}

// tmm(2a + b) += A · B over the chunk; A rows of `a_stride` bytes, B tiles one column block apart.
// kTokenTiles: 1 or 2 token tiles. Per column block: A hi × B hi, (kSplit) A hi × B lo, (kLo)
// A lo × B hi.
template <int kTokenTiles, bool kSplit, bool kLo>
MINIMAX_AVX512 void multiply(const uint16_t* a_hi, const uint16_t* a_lo, int64_t a_stride,
                             const uint16_t* b_hi, const uint16_t* b_lo, int64_t b_tile_stride,
                             int64_t blocks) {
  const int64_t a_second = kTileM * a_stride / 2;  // elements from row tile 0 to row tile 1
  for (int64_t k = 0; k < blocks; ++k) {
    const uint16_t* ah = a_hi + k * kTileK;
    const uint16_t* bh = b_hi + k * 2 * kTileDwords;
    _tile_loadd(4, ah, a_stride);
    _tile_loadd(5, ah + a_second, a_stride);
    _tile_loadd(6, bh, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(2, 5, 6);
    if constexpr (kTokenTiles == 2) {
      _tile_loadd(7, bh + b_tile_stride, 64);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(3, 5, 7);
    }
    if constexpr (kSplit) {
      const uint16_t* bl = b_lo + k * 2 * kTileDwords;
      _tile_loadd(6, bl, 64);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (kTokenTiles == 2) {
        _tile_loadd(7, bl + b_tile_stride, 64);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(3, 5, 7);
      }
    }
    if constexpr (kLo) {
      const uint16_t* al = a_lo + k * kTileK;
      _tile_loadd(4, al, a_stride);
      _tile_loadd(5, al + a_second, a_stride);
      if constexpr (kSplit) {  // tmm6 and tmm7 hold the lo activations: the hi ones again
        _tile_loadd(6, bh, 64);
        if constexpr (kTokenTiles == 2) _tile_loadd(7, bh + b_tile_stride, 64);
      }
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (kTokenTiles == 2) {
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(3, 5, 7);
      }
    }
  }
}

// Result tile (row tile a, token tile b) -> y[token, row] times the rows' scales, for `rows_valid`
// rows and `tokens_valid` tokens of it.
MINIMAX_AVX512 void store_result(const float* tile, const float* scale, int rows_valid,
                                 int tokens_valid, float* y, int64_t y_stride) {
  __m512 v[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) v[i] = _mm512_load_ps(tile + 16 * i);
  transpose16(v);
  const __m512 s = _mm512_loadu_ps(scale);
  const __mmask16 m = static_cast<__mmask16>(_bzhi_u32(0xFFFF, unsigned(rows_valid)));
  for (int t = 0; t < tokens_valid; ++t)
    _mm512_mask_storeu_ps(y + t * y_stride, m, _mm512_mul_ps(v[t], s));
}

// The four result tiles of a row panel × token tile pair, saved in `c`, -> y.
MINIMAX_AVX512 void store_results(const float* c, const float* scale, int rows_valid,
                                  int64_t tokens_left, float* y, int64_t y_stride) {
  for (int a = 0; a < 2; ++a) {
    const int ra = std::clamp(rows_valid - kTileM * a, 0, kTileM);
    for (int b = 0; b < 2; ++b) {
      const int tb = static_cast<int>(std::clamp<int64_t>(tokens_left - kTileM * b, 0, kTileM));
      if (ra > 0 && tb > 0)
        store_result(c + tile_offset(a, b), scale + kTileM * a, ra, tb,
                     y + kTileM * b * y_stride + kTileM * a, y_stride);
    }
  }
}

// The bytes of columns [c0, c0 + width) of rows [r, r + n) into L2. A panel reads each row's
// chunk (128-1024 bytes) and moves on to the next row: streams too short for the hardware
// prefetchers, which left the decode waiting on memory for half its time (perf, FP8 tiles).
template <class Src>
MINIMAX_AVX512 void prefetch_panel(const Src& src, int64_t r, int64_t n, int64_t c0,
                                   int64_t width) {
  const int64_t begin = c0 * Src::kNibblesPerColumn / 2;
  const int64_t bytes = width * Src::kNibblesPerColumn / 2;
  for (int64_t i = 0; i < n; ++i) {
    // Integer arithmetic: past the last column the address may lie outside the matrix (prefetch
    // allows that; it is never dereferenced).
    const uintptr_t row = reinterpret_cast<uintptr_t>(src.data) +
                          static_cast<uintptr_t>((r + i) * src.stride + begin);
    for (int64_t b = 0; b < bytes; b += 64)
      _mm_prefetch(reinterpret_cast<const char*>(row + static_cast<uintptr_t>(b)), _MM_HINT_T1);
  }
}

// Panels whose sums are scaled per segment of columns (FP8 tiles), not once per row.
template <class Src>
constexpr bool kScaledSegments = requires {
  Src::kScaledSegments;
};

template <class Src, bool kSplit>
MINIMAX_AVX512 void gemm_rows_amx(const WeightView& w, const float* x, int64_t tokens, float* y,
                                  int64_t row_begin, int64_t row_end) {
  const Src src(w);
  const int64_t cols = w.cols, rows = w.rows;
  constexpr int kPanelPlanes = Src::kLo ? 2 : 1;
  constexpr int kPlanes = kSplit ? 2 : 1;
  // Equal column chunks of whole 64-code loads whose panel fits kPanelBytes.
  const int64_t padded = (cols + 63) / 64 * 64;
  const int64_t widest = kPanelBytes / (2 * kPanelRows * kPanelPlanes);
  const int64_t chunks = (padded + widest - 1) / widest;
  // Chunks of whole segments: `segment` columns share each row's scale (a multiple of 64).
  int64_t segment = (padded / chunks + 63) / 64 * 64;
  if constexpr (kScaledSegments<Src>) segment = src.segment_cols;
  const int64_t width = (padded / chunks + segment - 1) / segment * segment;
  const int64_t segment_blocks = segment / kTileK;
  const int64_t blocks = width / kTileK;
  int64_t block = kPackedBytes / (2 * kPlanes * width);
  block = std::clamp<int64_t>(block / (2 * kTileM) * (2 * kTileM), 2 * kTileM, kMaxBlockTokens);
  const int64_t block_tiles = (std::min(block, tokens) + kTileM - 1) / kTileM;
  const int64_t pairs = (block_tiles + 1) / 2;
  const int64_t panels = (row_end - row_begin + kPanelRows - 1) / kPanelRows;
  const int64_t plane_elems = block_tiles * blocks * 2 * kTileDwords;  // uint16 per packed plane
  thread_local AlignedScratch packed_scratch, rows_scratch, panel_scratch, sums_scratch;
  auto* packed = static_cast<uint16_t*>(packed_scratch.get(2 * kPlanes * plane_elems));
  auto* row_buf = static_cast<uint16_t*>(rows_scratch.get(2 * kPlanes * kTileM * width));
  const int64_t panel_plane = kPanelRows * width;
  auto* panel = static_cast<uint16_t*>(panel_scratch.get(2 * kPanelPlanes * panel_plane));
  // Partial sums between chunks: four result tiles per row panel and token tile pair.
  auto* sums = static_cast<float*>(sums_scratch.get(4 * 4 * kTileDwords * panels * pairs));
  alignas(64) float scale[kPanelRows] = {};
  // Per segment of the chunk, its scale for each row of the panel (kScaledSegments).
  thread_local std::vector<float> segment_scales;
  segment_scales.resize(static_cast<size_t>(width / segment * kPanelRows));
  alignas(64) float tmp[4 * kTileDwords];
  const int64_t b_tile = blocks * 2 * kTileDwords;  // elements from one token tile to the next

  load_tile_config();
  for (int64_t t0 = 0; t0 < tokens; t0 += block) {
    const int64_t n = std::min(block, tokens - t0);
    const int64_t tiles = (n + kTileM - 1) / kTileM;
    for (int64_t c0 = 0; c0 < padded; c0 += width) {
      const bool first = c0 == 0, last = c0 + width >= padded;
      pack_activations<kSplit>(x + t0 * cols, n, cols, c0, width, row_buf, packed, plane_elems);
      for (int64_t p = 0; p < panels; ++p) {
        const int64_t r = row_begin + p * kPanelRows;
        const int nr = static_cast<int>(std::min<int64_t>(kPanelRows, row_end - r));
        // The next panel's bytes, or the first panel's of the next chunk.
        if (p + 1 < panels) {
          const int64_t next = r + kPanelRows;
          prefetch_panel(src, next, std::min<int64_t>(kPanelRows, row_end - next), c0, width);
        } else if (c0 + width < padded) {
          prefetch_panel(src, row_begin, std::min<int64_t>(kPanelRows, row_end - row_begin),
                         c0 + width, width);
        }
        for (int i = 0; i < kPanelRows; ++i) {
          uint16_t* hi = panel + i * width;
          uint16_t* lo = Src::kLo ? panel + panel_plane + i * width : nullptr;
          if (i < nr) {
            src.row(r + i, c0, width, hi, lo, &scale[i]);
          } else {
            std::memset(hi, 0, 2 * width);
            if (Src::kLo) std::memset(lo, 0, 2 * width);
            scale[i] = 0.0f;
          }
        }
        // Segments past the last column hold only zeros: skipped.
        const int64_t segments = std::min(width, cols - c0 + segment - 1) / segment;
        if constexpr (kScaledSegments<Src>)
          for (int64_t g = 0; g < segments; ++g)
            for (int i = 0; i < kPanelRows; ++i)
              segment_scales[g * kPanelRows + i] =
                  i < nr ? src.segment_scale(r + i, c0 + g * segment) : 0.0f;
        compiler_barrier();
        for (int64_t b = 0; b < tiles; b += 2) {
          const uint16_t* bh = packed + b * b_tile;
          const uint16_t* bl = packed + plane_elems + b * b_tile;
          float* c = sums + (p * pairs + b / 2) * 4 * kTileDwords;
          if constexpr (kScaledSegments<Src>) {
            for (int64_t g = 0; g < segments; ++g) {
              const int64_t at = g * segment_blocks;  // column block
              const float* gs = segment_scales.data() + g * kPanelRows;
              if (b + 1 < tiles) {
                load_results<2>(nullptr);
                multiply<2, kSplit, false>(panel + at * kTileK, nullptr, 2 * width,
                                           bh + at * 2 * kTileDwords, bl + at * 2 * kTileDwords,
                                           b_tile, segment_blocks);
                add_scaled_results<2>(tmp, gs, first && g == 0, c);
              } else {
                load_results<1>(nullptr);
                multiply<1, kSplit, false>(panel + at * kTileK, nullptr, 2 * width,
                                           bh + at * 2 * kTileDwords, bl + at * 2 * kTileDwords,
                                           b_tile, segment_blocks);
                add_scaled_results<1>(tmp, gs, first && g == 0, c);
              }
            }
          } else if (b + 1 < tiles) {
            load_results<2>(first ? nullptr : c);
            multiply<2, kSplit, Src::kLo>(panel, panel + panel_plane, 2 * width, bh, bl, b_tile,
                                          blocks);
            save_results<2>(c);
          } else {
            load_results<1>(first ? nullptr : c);
            multiply<1, kSplit, Src::kLo>(panel, panel + panel_plane, 2 * width, bh, bl, b_tile,
                                          blocks);
            save_results<1>(c);
          }
          if (last)
            store_results(c, scale, nr, n - b * kTileM, y + (t0 + b * kTileM) * rows + r, rows);
        }
        compiler_barrier();
      }
    }
  }
  _tile_release();
}

template <class Src>
GemmRowsFn amx(bool split) {
  return split ? gemm_rows_amx<Src, true> : gemm_rows_amx<Src, false>;
}

}  // namespace

GemmRowsFn gemm_amx_kernel(const WeightView& w, bool split) {
  using F = Fp8Scaling;
  switch (w.format) {
    case WeightFormat::kBF16:
      return amx<Bf16Panel>(split);
    case WeightFormat::kFp8Channel:
      return amx<Fp8Panel<F::kChannel>>(split);
    case WeightFormat::kFp8Block:
      // Byte tables for tiles a multiple of 64 wide (the published 128); else one scale per 16
      // columns at least.
      if (w.block_cols % 64 == 0) return amx<Fp8TileSumsPanel>(split);
      if (w.block_cols % 16 != 0) return nullptr;
      return amx<Fp8Panel<F::kTile>>(split);
    case WeightFormat::kMxfp8:
      return amx<Fp8Panel<F::kMx>>(split);
    case WeightFormat::kMxfp4:
      return amx<Fp4Panel<false>>(split);
    case WeightFormat::kNvfp4:
      return amx<Fp4Panel<true>>(split);
    case WeightFormat::kF32:
      break;
  }
  return nullptr;
}

}  // namespace minimax::cpu_linear_detail
