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
//   packed activations in L2), row panels, token tile pairs; small blocks swap the chunks and the
//   panels (gemm_rows_amx). Two row tiles × two token tiles of results stay in the tile registers
//   over a chunk and in a buffer between chunks. Each (panel, chunk) step requests the next one's
//   weight bytes a few lines at a time (PanelPrefetch).
#define MINIMAX_AVX512_BASE_TARGET \
  "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512bf16,fma,f16c,bmi,bmi2"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/amx_target.h"
#include "kernels/cpu/amx_tiles-inl.h"
#include "kernels/cpu/linear_avx512-inl.h"
#include "kernels/cpu/linear_bf16_panels-inl.h"
#include "kernels/cpu/linear_bf16_split-inl.h"

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
// A token block whose activations packed for every column fit this (in the 2 MiB L2 of the CPUs
// with AMX, beside a panel) walks the panels outer (gemm_rows_amx): up to 32 tokens of 8192
// columns, 64 of 4096.
constexpr int64_t kWholePackedBytes = 1280 * 1024;

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
                             int64_t blocks, PanelPrefetch& prefetch) {
  const int64_t a_second = kTileM * a_stride / 2;  // elements from row tile 0 to row tile 1
  for (int64_t k = 0; k < blocks; ++k) {
    prefetch.issue();
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

// What one gemm_rows_amx call holds: the weight's decoder, the chunking, the scratch, and the
// token block being multiplied.
template <class Src, bool kSplit>
struct AmxCall {
  static constexpr int kPanelPlanes = Src::kLo ? 2 : 1;
  static constexpr int kPlanes = kSplit ? 2 : 1;
  const Src src;
  const int64_t cols, rows, row_begin, row_end;
  int64_t padded, width, segment, panels;
  float* y;
  // The token block: n tokens in `tiles` tiles, its packed activations (`plane` elements per
  // plane; token tiles `b_tile` apart; column block 0 of the chunk at `packed`).
  int64_t t0 = 0, n = 0, tiles = 0;
  const uint16_t* packed = nullptr;
  int64_t plane = 0, b_tile = 0;
  uint16_t* panel = nullptr;
  float* sums = nullptr;
  int64_t pairs = 0;
  std::vector<float>* segment_scales = nullptr;
  alignas(64) float scale[kPanelRows] = {};
  alignas(64) float tmp[4 * kTileDwords];

  MINIMAX_AVX512 AmxCall(const WeightView& w, float* y_, int64_t begin, int64_t end)
      : src(w), cols(w.cols), rows(w.rows), row_begin(begin), row_end(end), y(y_) {
    // Equal column chunks of whole 64-code loads whose panel fits kPanelBytes.
    padded = (cols + 63) / 64 * 64;
    const int64_t widest = kPanelBytes / (2 * kPanelRows * kPanelPlanes);
    const int64_t chunks = (padded + widest - 1) / widest;
    // Chunks of whole segments: `segment` columns share each row's scale (a multiple of 64).
    segment = (padded / chunks + 63) / 64 * 64;
    if constexpr (kScaledSegments<Src>) segment = src.segment_cols;
    width = (padded / chunks + segment - 1) / segment * segment;
    panels = (row_end - row_begin + kPanelRows - 1) / kPanelRows;
  }

  PanelPrefetch next;  // the bytes the next step reads, requested through this one

  // Aims `next` at panel p's chunk at c0 (nothing past the last panel or chunk), spread over the
  // calls of issue() that a step makes: one per decoded row and per tile multiply block, one per
  // result tile pair's scaling.
  MINIMAX_AVX512 void prefetch(int64_t p, int64_t c0) {
    next = PanelPrefetch{};
    if (p >= panels || c0 >= padded) return;
    const int64_t r = row_begin + p * kPanelRows;
    const int64_t segments = kScaledSegments<Src> ? width / segment : 1;
    const int64_t calls = kPanelRows + (tiles + 1) / 2 * (width / kTileK + segments);
    next = PanelPrefetch::spread(
        reinterpret_cast<uintptr_t>(src.data) +
            static_cast<uintptr_t>(r * src.stride + c0 * Src::kNibblesPerColumn / 2),
        src.stride, width * Src::kNibblesPerColumn / 2, std::min<int64_t>(kPanelRows, row_end - r),
        calls);
  }

  // Row panel p over the chunk at c0: decode it, multiply it with every token tile pair of the
  // block and add into their sums (the last chunk stores y).
  MINIMAX_AVX512 void step(int64_t p, int64_t c0) {
    const bool first = c0 == 0, last = c0 + width >= padded;
    const int64_t r = row_begin + p * kPanelRows;
    const int nr = static_cast<int>(std::min<int64_t>(kPanelRows, row_end - r));
    const int64_t panel_plane = kPanelRows * width;
    for (int i = 0; i < kPanelRows; ++i) {
      uint16_t* hi = panel + i * width;
      uint16_t* lo = Src::kLo ? panel + panel_plane + i * width : nullptr;
      next.issue();
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
    const int64_t segment_blocks = segment / kTileK;
    std::vector<float>& gss = *segment_scales;
    if constexpr (kScaledSegments<Src>)
      for (int64_t g = 0; g < segments; ++g)
        for (int i = 0; i < kPanelRows; ++i)
          gss[g * kPanelRows + i] = i < nr ? src.segment_scale(r + i, c0 + g * segment) : 0.0f;
    compiler_barrier();
    const int64_t blocks = width / kTileK;
    for (int64_t b = 0; b < tiles; b += 2) {
      const uint16_t* bh = packed + b * b_tile;
      const uint16_t* bl = packed + plane + b * b_tile;
      float* c = sums + (p * pairs + b / 2) * 4 * kTileDwords;
      if constexpr (kScaledSegments<Src>) {
        for (int64_t g = 0; g < segments; ++g) {
          const int64_t at = g * segment_blocks;  // column block
          const float* gs = gss.data() + g * kPanelRows;
          if (b + 1 < tiles) {
            load_results<2>(nullptr);
            multiply<2, kSplit, false>(panel + at * kTileK, nullptr, 2 * width,
                                       bh + at * 2 * kTileDwords, bl + at * 2 * kTileDwords, b_tile,
                                       segment_blocks, next);
            add_scaled_results<2>(tmp, gs, first && g == 0, c);
            next.issue();
          } else {
            load_results<1>(nullptr);
            multiply<1, kSplit, false>(panel + at * kTileK, nullptr, 2 * width,
                                       bh + at * 2 * kTileDwords, bl + at * 2 * kTileDwords, b_tile,
                                       segment_blocks, next);
            add_scaled_results<1>(tmp, gs, first && g == 0, c);
            next.issue();
          }
        }
      } else if (b + 1 < tiles) {
        load_results<2>(first ? nullptr : c);
        multiply<2, kSplit, Src::kLo>(panel, panel + panel_plane, 2 * width, bh, bl, b_tile, blocks,
                                      next);
        save_results<2>(c);
        next.issue();
      } else {
        load_results<1>(first ? nullptr : c);
        multiply<1, kSplit, Src::kLo>(panel, panel + panel_plane, 2 * width, bh, bl, b_tile, blocks,
                                      next);
        save_results<1>(c);
        next.issue();
      }
      if (last) store_results(c, scale, nr, n - b * kTileM, y + (t0 + b * kTileM) * rows + r, rows);
    }
    next.finish();
    compiler_barrier();
  }
};

// Two loop orders over (row panel, column chunk), the same sums in the same order either way:
// - Small token blocks, whose activations packed for every column fit kPackedBytes (decode
//   batches, speculative verification, a draft head's rows): panels outer, each panel's rows read
//   chunk after chunk along their length. Walking the chunks outer read 32 rows' 512 bytes and
//   moved on down the whole matrix once per chunk, missing the TLB and the DRAM pages on every
//   row; the decode then waited on memory for most of its time (perf: 64% on the code loads, FP8
//   tiles at 16 tokens, 2.7 GB/s on one core of the Intel Xeon with AMX).
// - Larger blocks: chunks outer, the chunk's packed activations shared by every panel.
template <class Src, bool kSplit>
MINIMAX_AVX512 void gemm_rows_amx(const WeightView& w, const float* x, int64_t tokens, float* y,
                                  int64_t row_begin, int64_t row_end) {
  AmxCall<Src, kSplit> call(w, y, row_begin, row_end);
  constexpr int kPlanes = AmxCall<Src, kSplit>::kPlanes;
  const int64_t padded = call.padded, width = call.width, panels = call.panels;
  int64_t block = kPackedBytes / (2 * kPlanes * width);
  block = std::clamp<int64_t>(block / (2 * kTileM) * (2 * kTileM), 2 * kTileM, kMaxBlockTokens);
  const int64_t block_tiles = (std::min(block, tokens) + kTileM - 1) / kTileM;
  // Every column packed at once (`whole`) where the block's activations fit kWholePackedBytes.
  // The chunks span `span` columns, past `padded` where whole segments overshoot it (a 128-wide
  // FP8 tile segment over 192 padded columns): packed activations cover it, zero past cols.
  const int64_t span = (padded + width - 1) / width * width;
  const bool whole = 2 * kPlanes * block_tiles * kTileM * span <= kWholePackedBytes;
  const int64_t pack_width = whole ? span : width;
  call.pairs = (block_tiles + 1) / 2;
  const int64_t plane_elems = block_tiles * (pack_width / kTileK) * 2 * kTileDwords;
  thread_local AlignedScratch packed_scratch, rows_scratch, panel_scratch, sums_scratch;
  auto* packed = static_cast<uint16_t*>(packed_scratch.get(2 * kPlanes * plane_elems));
  auto* row_buf = static_cast<uint16_t*>(rows_scratch.get(2 * kPlanes * kTileM * pack_width));
  call.panel = static_cast<uint16_t*>(
      panel_scratch.get(2 * AmxCall<Src, kSplit>::kPanelPlanes * kPanelRows * width));
  // Partial sums between chunks: four result tiles per row panel and token tile pair.
  call.sums = static_cast<float*>(sums_scratch.get(4 * 4 * kTileDwords * panels * call.pairs));
  // Per segment of the chunk, its scale for each row of the panel (kScaledSegments).
  thread_local std::vector<float> segment_scales;
  segment_scales.resize(static_cast<size_t>(width / call.segment * kPanelRows));
  call.segment_scales = &segment_scales;
  call.plane = plane_elems;
  call.b_tile = (pack_width / kTileK) * 2 * kTileDwords;

  load_tile_config();
  for (int64_t t0 = 0; t0 < tokens; t0 += block) {
    call.t0 = t0;
    call.n = std::min(block, tokens - t0);
    call.tiles = (call.n + kTileM - 1) / kTileM;
    if (whole) {
      pack_activations<kSplit>(x + t0 * w.cols, call.n, w.cols, 0, span, row_buf, packed,
                               plane_elems);
      for (int64_t p = 0; p < panels; ++p)
        for (int64_t c0 = 0; c0 < padded; c0 += width) {
          // The next chunk of this panel, or the next panel's first.
          if (c0 + width < padded)
            call.prefetch(p, c0 + width);
          else
            call.prefetch(p + 1, 0);
          call.packed = packed + c0 / kTileK * 2 * kTileDwords;
          call.step(p, c0);
        }
      continue;
    }
    for (int64_t c0 = 0; c0 < padded; c0 += width) {
      pack_activations<kSplit>(x + t0 * w.cols, call.n, w.cols, c0, width, row_buf, packed,
                               plane_elems);
      call.packed = packed;
      for (int64_t p = 0; p < panels; ++p) {
        // The next panel's bytes, or the first panel's of the next chunk.
        if (p + 1 < panels)
          call.prefetch(p + 1, c0);
        else
          call.prefetch(0, c0 + width);
        call.step(p, c0);
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

namespace MINIMAX_AMX_TILES {

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

}  // namespace MINIMAX_AMX_TILES
}  // namespace minimax::cpu_linear_detail
