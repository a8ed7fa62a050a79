// The batch (prefill) linear with bf16 activations: a register tile of 8 weight rows × 2 tokens
// multiplied with vdpbf16ps (AVX-512 + AVX512_BF16). Per token block the activations are rounded
// to bf16 once (vcvtne2ps2bf16; for FP8 tiles each one times its tile's scale), and the weight
// rows of a tile are read once for all the block's tokens: bf16 rows in place, FP8, MXFP8, MXFP4
// and NVFP4 rows decoded to bf16 once into a panel in L1. Each tile reads 8 weight and 2
// activation vectors per 16 vdpbf16ps, keeps the 16 sums in registers and reduces them together
// at the end. 8 × 2 rather than 4 × 4: the same loads per product, but half the activation bytes
// per product come through L2 (a block's activations do not fit L1; the panel's rows do), and it
// prefilled 1.04-1.10x faster on AMD Zen 4 (docs/cpu_kernels.md).
// With split activations (ActivationPrecision::kBF16x2) each activation is stored as bf16 hi and
// lo halves in two planes and every weight vector meets both: twice the vdpbf16ps, near-f32
// accuracy. docs/cpu_kernels.md ("Batches") gives the numbers.
#define MINIMAX_AVX512_TARGET \
  "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512bf16,fma,f16c,bmi,bmi2"
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/cpu/linear_avx512-inl.h"
#include "kernels/cpu/linear_bf16_panels-inl.h"
#include "kernels/cpu/linear_bf16_split-inl.h"
#include "kernels/cpu/linear_fp8-inl.h"

namespace minimax::cpu_linear_detail {
namespace {

constexpr int kChunk = 32;                     // bf16 columns per vector
constexpr int kTileRows = 8, kTileTokens = 2;  // the register tile
static_assert(kTileRows == 8 && kTileTokens == 2, "tile() reduces the full tile as 8 rows × 2");
constexpr int64_t kBlockBytes = 512 * 1024;  // bf16 activations of one token block (L2)
constexpr int64_t kMaxBlockTokens = 256;
// Widest column panel: 8 bf16 rows of it (16 KiB) stay in L1 beside the activations streaming by
// (4 rows: 1536 and 768 measured the same within noise, one panel of 3072 columns 5% slower, on
// the Intel Xeon; 8 rows on AMD Zen 4: 512 and 1536 the same as 1024 within noise).
constexpr int64_t kPanelCols = 1024;

// Sum of each of 16 vectors, in lane i for vector i: a transposing tree (45 instructions instead
// of 16 full reductions).
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE __m512 sum16(const __m512 (&v)[16]) {
  __m512 a[8], b[4], c[2];
#pragma GCC unroll 16
  for (int i = 0; i < 8; ++i)
    a[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]),
                         _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
#pragma GCC unroll 16
  for (int i = 0; i < 4; ++i) {
    const __m512d p = _mm512_castps_pd(a[2 * i]), q = _mm512_castps_pd(a[2 * i + 1]);
    b[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(p, q)),
                         _mm512_castpd_ps(_mm512_unpackhi_pd(p, q)));
  }
#pragma GCC unroll 16
  for (int i = 0; i < 2; ++i)
    c[i] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], 0x88),
                         _mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], 0xDD));
  return _mm512_add_ps(_mm512_shuffle_f32x4(c[0], c[1], 0x88),
                       _mm512_shuffle_f32x4(c[0], c[1], 0xDD));
}

// One vector of columns (chunk c) for the tile: R weight loads, T activation loads, R·T
// vdpbf16ps (kSplit: the lo plane, lo_offset elements after x, too).
template <bool kSplit, int R, int T>
MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void step(const uint16_t* w, int64_t w_stride,
                                               const uint16_t* x, int64_t x_stride,
                                               int64_t lo_offset, int64_t c, __mmask32 mask,
                                               bool prefetch, __m512 (&acc)[R][T]) {
  __m512i wv[R];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    const uint16_t* p = w + r * w_stride + c * kChunk;
    wv[r] = _mm512_maskz_loadu_epi16(mask, p);
    // Integer arithmetic: past the last rows the address may lie outside the matrix (prefetch
    // allows that; it is never dereferenced).
    if (prefetch)
      _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) +
                                                 static_cast<uintptr_t>(2 * R * w_stride)),
                   _MM_HINT_T1);
  }
#pragma GCC unroll 16
  for (int t = 0; t < T; ++t) {
    const __m512i xv = _mm512_load_si512(x + t * x_stride + c * kChunk);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
      acc[r][t] = _mm512_dpbf16_ps(acc[r][t], (__m512bh)wv[r], (__m512bh)xv);
    if constexpr (kSplit) {
      const __m512i lo = _mm512_load_si512(x + lo_offset + t * x_stride + c * kChunk);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r)
        acc[r][t] = _mm512_dpbf16_ps(acc[r][t], (__m512bh)wv[r], (__m512bh)lo);
    }
  }
}

// y[t, r] = scale[r] · Σ_c w[r, c] · x[t, c] for R rows × T tokens. w rows are `w_stride`
// elements apart and valid for `cols` columns (the tail vector is masked); x rows are zero-padded
// to whole vectors. With `prefetch`, the R rows after the tile are fetched into L2 on the way.
template <bool kSplit, int R, int T>
MINIMAX_AVX512 void tile(const uint16_t* w, int64_t w_stride, const uint16_t* x, int64_t x_stride,
                         int64_t lo_offset, int64_t cols, const float* scale, float* y,
                         int64_t y_stride, bool prefetch, bool add) {
  __m512 acc[R][T];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
  const int64_t full = cols / kChunk;
  const int rem = static_cast<int>(cols % kChunk);
  for (int64_t c = 0; c < full; ++c)
    step<kSplit, R, T>(w, w_stride, x, x_stride, lo_offset, c, ~__mmask32{0}, prefetch, acc);
  if (rem != 0)
    step<kSplit, R, T>(w, w_stride, x, x_stride, lo_offset, full,
                       static_cast<__mmask32>(_bzhi_u32(~0u, static_cast<unsigned>(rem))), prefetch,
                       acc);
  if constexpr (R == 8 && T == 2) {
    __m512 v[16];
#pragma GCC unroll 16
    for (int t = 0; t < 2; ++t)
#pragma GCC unroll 16
      for (int r = 0; r < 8; ++r) v[8 * t + r] = acc[r][t];
    // Lane 8t + r holds (row r, token t).
    const __m512 s = _mm512_mul_ps(sum16(v), _mm512_broadcast_f32x8(_mm256_loadu_ps(scale)));
    __m256 out[2] = {_mm512_extractf32x8_ps(s, 0), _mm512_extractf32x8_ps(s, 1)};
#pragma GCC unroll 2
    for (int t = 0; t < 2; ++t) {
      if (add) out[t] = _mm256_add_ps(out[t], _mm256_loadu_ps(y + t * y_stride));
      _mm256_storeu_ps(y + t * y_stride, out[t]);
    }
  } else {
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
      for (int t = 0; t < T; ++t) {
        const float v = _mm512_reduce_add_ps(acc[r][t]) * scale[r];
        y[t * y_stride + r] = add ? y[t * y_stride + r] + v : v;
      }
  }
}

// Where a tile's bf16 weight rows come from. Bf16Rows: the matrix itself.
struct Bf16Rows {
  static constexpr bool kBlockScaled = false, kInPlace = true;
  const uint16_t* data;
  int64_t stride;  // elements
  explicit Bf16Rows(const WeightView& w)
      : data(reinterpret_cast<const uint16_t*>(w.data)), stride(weight_data_stride(w) / 2) {}
  const uint16_t* rows(int64_t r, int, uint16_t*, int64_t* w_stride, float* scale) const {
    *w_stride = stride;
#pragma GCC unroll 16
    for (int i = 0; i < kTileRows; ++i) scale[i] = 1.0f;
    return data + r * stride;
  }
};

// Rows decoded to exact bf16 into a panel once per token block by the batch GEMMs' row decoders
// (linear_bf16_panels-inl.h): FP8 per channel (the row scale on the sums), FP8 tiles (kBlock:
// the codes; the tile scales go into the activations), MXFP8 (e4m3 × 2^k), MXFP4 (e2m1 × 2^k) and
// NVFP4 (e2m1 × e4m3, the global scale on the sums). Exact unless a product falls below bf16's
// normal range (an e8m0 code below about 3), which vdpbf16ps reads as zero.
template <class Panel, bool kBlock = false>
struct PanelRows {
  static constexpr bool kBlockScaled = kBlock, kInPlace = false;
  Panel source;
  int64_t panel_stride;
  MINIMAX_AVX512 explicit PanelRows(const WeightView& w)
      : source(w), panel_stride((w.cols + 63) / 64 * 64) {}
  MINIMAX_AVX512 const uint16_t* rows(int64_t r, int n, uint16_t* panel, int64_t* w_stride,
                                      float* scale) const {
    for (int i = 0; i < n; ++i)
      source.row(r + i, 0, panel_stride, panel + i * panel_stride, nullptr, &scale[i]);
    *w_stride = panel_stride;
    return panel;
  }
  // FP8 tiles (kBlock): the scales that go into the activations.
  const Fp8Scales& tile_scales() const { return source.scales; }
  // Rows [r, r + n) of the matrix, their whole width, spread over `calls` calls of issue().
  // Rows past the thread's range or the matrix are requested too (never dereferenced).
  PanelPrefetch next_rows(int64_t r, int n, int64_t calls) const {
    return PanelPrefetch::spread(
        reinterpret_cast<uintptr_t>(source.data) + static_cast<uintptr_t>(r * source.stride),
        source.stride, source.cols * Panel::kNibblesPerColumn / 2, n, calls);
  }
};

// Every token of the block against R rows, two tokens at a time. Only the first token group
// prefetches the next rows (in-place weights); a panel is already in L1, and `next` requests the
// rows of the next panel a few lines before each token group.
template <class Src, bool kSplit, int R>
MINIMAX_AVX512 void token_loop(const uint16_t* w, int64_t w_stride, const uint16_t* x,
                               int64_t x_stride, int64_t lo_offset, int64_t tokens, int64_t cols,
                               const float* scale, float* y, int64_t rows, bool add,
                               PanelPrefetch& next) {
  int64_t t = 0;
  for (; t + kTileTokens <= tokens; t += kTileTokens) {
    next.issue();
    tile<kSplit, R, kTileTokens>(w, w_stride, x + t * x_stride, x_stride, lo_offset, cols, scale,
                                 y + t * rows, rows, Src::kInPlace && t == 0, add);
  }
  next.issue();
  if (t < tokens)
    tile<kSplit, R, 1>(w, w_stride, x + t * x_stride, x_stride, lo_offset, cols, scale,
                       y + t * rows, rows, Src::kInPlace && t == 0, add);
}

// token_loop for a tile of nr rows (1 to kTileRows).
template <class Src, bool kSplit, int R = kTileRows>
MINIMAX_AVX512 void token_loop_rows(int nr, const uint16_t* w, int64_t w_stride, const uint16_t* x,
                                    int64_t x_stride, int64_t lo_offset, int64_t tokens,
                                    int64_t cols, const float* scale, float* y, int64_t rows,
                                    bool add, PanelPrefetch& next) {
  if constexpr (R > 1) {
    if (nr < R)
      return token_loop_rows<Src, kSplit, R - 1>(nr, w, w_stride, x, x_stride, lo_offset, tokens,
                                                 cols, scale, y, rows, add, next);
  }
  token_loop<Src, kSplit, R>(w, w_stride, x, x_stride, lo_offset, tokens, cols, scale, y, rows, add,
                             next);
}

template <class Src, bool kSplit>
MINIMAX_AVX512 void gemm_rows(const WeightView& w, const float* x, int64_t tokens, float* y,
                              int64_t row_begin, int64_t row_end) {
  const Src src(w);
  const int64_t cols = w.cols, rows = w.rows;
  const int64_t x_stride = (cols + kChunk - 1) / kChunk * kChunk;
  // Equal panels of whole vectors, none wider than kPanelCols.
  const int64_t panels = (cols + kPanelCols - 1) / kPanelCols;
  const int64_t panel_cols = (cols / panels + kChunk - 1) / kChunk * kChunk;
  constexpr int kPlanes = kSplit ? 2 : 1;  // hi (and lo) activations
  int64_t block =
      std::clamp<int64_t>(kBlockBytes / (2 * kPlanes * x_stride), kTileTokens, kMaxBlockTokens);
  block = block / kTileTokens * kTileTokens;
  const int64_t lo_offset = std::min(block, tokens) * x_stride;  // elements from hi to lo plane
  thread_local AlignedScratch x_scratch, panel_scratch;
  thread_local std::vector<float> col_scale;
  auto* xb = static_cast<uint16_t*>(
      x_scratch.get(sizeof(uint16_t) * static_cast<size_t>(kPlanes * lo_offset)));
  uint16_t* panel = Src::kInPlace
                        ? nullptr
                        : static_cast<uint16_t*>(panel_scratch.get(
                              sizeof(uint16_t) * static_cast<size_t>(kTileRows * (cols + 64))));
  if (Src::kBlockScaled && col_scale.size() < static_cast<size_t>(cols)) col_scale.resize(cols);
  for (int64_t t0 = 0; t0 < tokens; t0 += block) {
    const int64_t n = std::min(block, tokens - t0);
    const float* xt = x + t0 * cols;
    if (!Src::kBlockScaled) to_bf16_rows<kSplit>(xt, n, cols, x_stride, nullptr, xb, lo_offset);
    int64_t r = row_begin;
    while (r < row_end) {
      int64_t segment_end = row_end;
      if constexpr (Src::kBlockScaled) {
        // The activations times this tile row's scales, once per tile row of the weight.
        const Fp8Scales& scales = src.tile_scales();
        const int64_t tile_row = r / scales.block_rows;
        segment_end = std::min(row_end, (tile_row + 1) * scales.block_rows);
        for (int64_t c = 0; c < cols; ++c) col_scale[c] = scales.tile(r, c);
        to_bf16_rows<kSplit>(xt, n, cols, x_stride, col_scale.data(), xb, lo_offset);
      }
      for (int nr = 0; r < segment_end; r += nr) {
        nr = static_cast<int>(std::min<int64_t>(kTileRows, segment_end - r));
        int64_t w_stride = 0;
        float scale[kTileRows];
        const uint16_t* wr = src.rows(r, nr, panel, &w_stride, scale);
        // A panel's rows come from memory once, in rows of 1-6 KB read one after the other:
        // streams too short for the hardware prefetchers of AMD Zen 4, where waiting for them
        // was 45% of the panel decode in a 512-token prefill. So the next tile's rows are
        // requested while this one's products run, spread over its token groups (as the AMX
        // GEMM does, PanelPrefetch).
        PanelPrefetch next;  // issue() calls: one per token group and one per tail, per panel
        if constexpr (!Src::kInPlace)
          next = src.next_rows(r + nr, kTileRows,
                               (cols + panel_cols - 1) / panel_cols * (n / kTileTokens + 1));
        float* yr = y + t0 * rows + r;
        // Column panels of at most kPanelCols: the tile's weight rows stay in L1 while every
        // token group of the block passes; later panels add to y.
        for (int64_t c0 = 0; c0 < cols; c0 += panel_cols) {
          const int64_t nc = std::min(panel_cols, cols - c0);
          const uint16_t* wp = wr + c0;
          const uint16_t* xp = xb + c0;
          const bool add = c0 > 0;
          token_loop_rows<Src, kSplit>(nr, wp, w_stride, xp, x_stride, lo_offset, n, nc, scale, yr,
                                       rows, add, next);
        }
        next.finish();
      }
    }
  }
}

}  // namespace

GemmRowsFn gemm_bf16_kernel(const WeightView& w, bool split) {
  switch (w.format) {
    case WeightFormat::kBF16:
      return split ? gemm_rows<Bf16Rows, true> : gemm_rows<Bf16Rows, false>;
    case WeightFormat::kFp8Channel:
      return split ? gemm_rows<PanelRows<Fp8Panel<Fp8Scaling::kChannel>>, true>
                   : gemm_rows<PanelRows<Fp8Panel<Fp8Scaling::kChannel>>, false>;
    case WeightFormat::kFp8Block:
      return split ? gemm_rows<PanelRows<Fp8TileSumsPanel, true>, true>
                   : gemm_rows<PanelRows<Fp8TileSumsPanel, true>, false>;
    case WeightFormat::kMxfp8:
      return split ? gemm_rows<PanelRows<Fp8Panel<Fp8Scaling::kMx>>, true>
                   : gemm_rows<PanelRows<Fp8Panel<Fp8Scaling::kMx>>, false>;
    case WeightFormat::kMxfp4:
      return split ? gemm_rows<PanelRows<Fp4Panel<false>>, true>
                   : gemm_rows<PanelRows<Fp4Panel<false>>, false>;
    case WeightFormat::kNvfp4:
      return split ? gemm_rows<PanelRows<Fp4Panel<true>>, true>
                   : gemm_rows<PanelRows<Fp4Panel<true>>, false>;
    default:
      return nullptr;  // the row kernels (f32 weights)
  }
}

}  // namespace minimax::cpu_linear_detail
