// The batch (prefill) linear with f32 activations, for CPUs whose products run on f32 FMAs (AVX2,
// AVX-512 without AVX512_BF16, or `--activations f32` anywhere): a register tile of weight rows ×
// tokens over an f32 panel. Per token block each group of rows is decoded once into the panel, so
// an FP8 or FP4 weight is decoded once per block instead of once per four tokens as in the row
// kernels, and every FMA reads a weight vector already in registers. Included by
// linear_gemm_f32.cc once per ISA level (MINIMAX_GEMM_F32_LEVEL: 1 AVX2, 2 AVX-512), each in its
// own namespace with that level's target (so no #pragma once).
//
// Arithmetic, the same for every layout: each weight decodes to its exact f32 value (the MX and
// NVFP4 block scales folded in: a power of two, or e2m1 · e4m3, are exact); one vector
// accumulator per (row, token) sums the products of a 1024-column chunk in column order, lane l
// taking columns l, l + lanes, ...; the chunk's lanes are added in a fixed tree and the chunks in
// turn into y; the row's scale (FP8 per channel, NVFP4's global scale; 1 otherwise) multiplies the
// final sum. So an MXFP4 expert, its exact FP8 conversion (a power-of-two row scale moved out of
// every product) and its BF16 copy give the same bits here, as they do in the row kernels
// (docs/cpu_kernels.md "One summation order"). FP8 tiles decode to their codes and multiply the
// activations by the tile's scale instead (one f32 rounding each), once per tile row.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/cpu/gcc12_avx512_warnings-inl.h"
#include "kernels/cpu/linear_internal.h"

#if MINIMAX_GEMM_F32_LEVEL == 2
// The AVX-512 level's (VBMI included: the e4m3 lookups), as the FP8 row kernels take it.
#define MINIMAX_AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,fma,f16c,bmi,bmi2"
#include "kernels/cpu/linear_bf16_panels-inl.h"
#define MINIMAX_GF __attribute__((target(MINIMAX_AVX512_TARGET ",avx2")))
#define MINIMAX_GF_NAMESPACE gemm_f32_avx512
#elif MINIMAX_GEMM_F32_LEVEL == 1
#define MINIMAX_GF __attribute__((target("avx2,fma,bmi,bmi2")))
#define MINIMAX_GF_NAMESPACE gemm_f32_avx2
#else
#error "define MINIMAX_GEMM_F32_LEVEL (1 or 2) before including linear_gemm_f32-inl.h"
#endif
#define MINIMAX_GF_INLINE MINIMAX_GF inline __attribute__((always_inline))

namespace minimax::cpu_linear_detail::MINIMAX_GF_NAMESPACE {
namespace {

#if MINIMAX_GEMM_F32_LEVEL == 2
struct V {
  using T = __m512;
  static constexpr int kLanes = 16;
  static constexpr int kRows = 6, kTokens = 4;  // 24 accumulators
  // Row groups per pass over a token group's activations: two groups' panels (48 KiB) and the
  // activations would not fit L1 (measured no faster).
  static constexpr int kGroups = 1;
  static MINIMAX_GF_INLINE T zero() { return _mm512_setzero_ps(); }
  static MINIMAX_GF_INLINE T load(const float* p) { return _mm512_load_ps(p); }
  static MINIMAX_GF_INLINE T set1(float v) { return _mm512_set1_ps(v); }
  static MINIMAX_GF_INLINE T fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  // Halves of 256, 128, 64 and 32 bits added in turn.
  static MINIMAX_GF_INLINE float sum(T v) {
    const __m256 a =
        _mm256_add_ps(_mm512_castps512_ps256(v),
                      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    const __m128 b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
    return _mm_cvtss_f32(_mm_add_ss(c, _mm_movehdup_ps(c)));
  }
};
#else
struct V {
  using T = __m256;
  static constexpr int kLanes = 8;
  static constexpr int kRows = 3, kTokens = 4;  // 12 accumulators of 16 registers
  // Two groups (24 KiB of panel) share each token group's activations from L1: 1.05-1.06x.
  static constexpr int kGroups = 2;
  static MINIMAX_GF_INLINE T zero() { return _mm256_setzero_ps(); }
  static MINIMAX_GF_INLINE T load(const float* p) { return _mm256_load_ps(p); }
  static MINIMAX_GF_INLINE T set1(float v) { return _mm256_set1_ps(v); }
  static MINIMAX_GF_INLINE T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static MINIMAX_GF_INLINE float sum(T v) {
    const __m128 b = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 c = _mm_add_ps(b, _mm_movehl_ps(b, b));
    return _mm_cvtss_f32(_mm_add_ss(c, _mm_movehdup_ps(c)));
  }
};
#endif

constexpr int64_t kChunkCols = 1024;         // R panel rows of a chunk stay in L1 (24 KiB at R = 6)
constexpr int64_t kBlockBytes = 512 * 1024;  // a token block's activations of one chunk (L2)
constexpr int64_t kMaxBlockTokens = 256;
constexpr int kMaxRows = 6;

inline float load_f32(const void* base, int64_t index) {
  float v;
  std::memcpy(&v, static_cast<const uint8_t*>(base) + 4 * index, 4);
  return v;
}

#if MINIMAX_GEMM_F32_LEVEL == 2
// AVX-512 decoders of a chunk, each writing whole vectors (up to 64 floats past `valid`, which
// the panel's slack and the next row absorb) of exact values; block scales past the row read 0.

// 32 bf16 -> f32 at out.
MINIMAX_GF_INLINE void store_bf16_as_f32(__m512i v, float* out) {
  __m512 a, b;
  bf16_to_f32(v, &a, &b);
  _mm512_store_ps(out, a);
  _mm512_store_ps(out + 16, b);
}

MINIMAX_GF void decode_bf16(const uint8_t* row, int64_t c0, int64_t valid, float* out) {
  const auto* p = reinterpret_cast<const uint16_t*>(row) + c0;
  for (int64_t c = 0; c < valid; c += 32) {
    const int64_t left = valid - c;
    const __mmask32 m = left >= 32 ? ~__mmask32{0} : _bzhi_u32(~0u, unsigned(left));
    store_bf16_as_f32(_mm512_maskz_loadu_epi16(m, p + c), out + c);
  }
}

// e4m3 codes times (kMx) the e8m0 scale of each 32 columns.
template <bool kMx>
MINIMAX_GF void decode_e4m3(const uint8_t* codes, const uint8_t* mx_scales, int64_t c0,
                            int64_t valid, float* out) {
  const E4m3Tables512 tables;
  const float* e8m0 = decode_tables().e8m0;
  for (int64_t c = 0; c < valid; c += 64) {
    __m512i v[2];
    e4m3_to_bf16(tables, load_codes(codes + c0 + c, valid - c), v);
    store_bf16_as_f32(v[0], out + c);
    store_bf16_as_f32(v[1], out + c + 32);
    if constexpr (kMx)
      for (int h = 0; h < 2 && c + 32 * h < valid; ++h) {
        const __m512 s = _mm512_set1_ps(e8m0[mx_scales[(c0 + c) / 32 + h]]);
        float* o = out + c + 32 * h;
        _mm512_store_ps(o, _mm512_mul_ps(_mm512_load_ps(o), s));
        _mm512_store_ps(o + 16, _mm512_mul_ps(_mm512_load_ps(o + 16), s));
      }
  }
}

// e2m1 pairs (low nibble: even column) times their block's scale: one e8m0 per 32 columns
// (MXFP4) or one e4m3 per 16 (NVFP4).
template <bool kNv>
MINIMAX_GF void decode_e2m1(const uint8_t* data, const uint8_t* scales, int64_t c0, int64_t valid,
                            float* out) {
  const DecodeTables& tab = decode_tables();
  const __m512 table = _mm512_load_ps(tab.e2m1);
  for (int64_t c = 0; c < valid; c += 32) {
    const int64_t col = c0 + c;
    const int64_t left = valid - c;
    __m512 a, b;
    e2m1_to_f32(table, data + col / 2, left, &a, &b);
    if constexpr (kNv) {
      a = _mm512_mul_ps(a, _mm512_set1_ps(tab.e4m3[scales[col / 16]]));
      b = _mm512_mul_ps(b, _mm512_set1_ps(left > 16 ? tab.e4m3[scales[col / 16 + 1]] : 0.0f));
    } else {
      const __m512 s = _mm512_set1_ps(tab.e8m0[scales[col / 32]]);
      a = _mm512_mul_ps(a, s);
      b = _mm512_mul_ps(b, s);
    }
    _mm512_store_ps(out + c, a);
    _mm512_store_ps(out + c + 16, b);
  }
}
#else
// bf16 widened by a shift, and e4m3 codes (times the e8m0 scale of each 32 columns: kMx) by
// table, at the AVX2 level.
MINIMAX_GF void decode_bf16(const uint8_t* row, int64_t c0, int64_t valid, float* out) {
  for (int64_t c = 0; c < valid; ++c) {
    uint16_t bits;
    std::memcpy(&bits, row + 2 * (c0 + c), 2);
    const uint32_t f = static_cast<uint32_t>(bits) << 16;
    std::memcpy(out + c, &f, 4);
  }
}

template <bool kMx>
MINIMAX_GF void decode_e4m3(const uint8_t* codes, const uint8_t* mx_scales, int64_t c0,
                            int64_t valid, float* out) {
  const DecodeTables& tab = decode_tables();
  for (int64_t c = 0; c < valid; ++c)
    out[c] = kMx ? tab.e4m3[codes[c0 + c]] * tab.e8m0[mx_scales[(c0 + c) / 32]]
                 : tab.e4m3[codes[c0 + c]];
}

// 16 e2m1 elements (8 bytes, element 2i in the low nibble of byte i) times their block's scale
// (MXFP4: one e8m0 per 32 columns; NVFP4: one e4m3 per 16), in column order: vpermps looks up
// the magnitude (the low 3 bits of the index) and the code's bit 3 becomes the sign.
template <bool kNv>
MINIMAX_GF void decode_e2m1(const uint8_t* data, const uint8_t* scales, int64_t c0, int64_t valid,
                            float* out) {
  const DecodeTables& tab = decode_tables();
  const __m256 magnitudes = _mm256_load_ps(tab.e2m1);  // codes 0-7: the positive values
  const __m256i bit3 = _mm256_set1_epi32(8);
  int64_t c = 0;
  for (; c + 16 <= valid; c += 16) {
    const int64_t col = c0 + c;
    const __m256i d =
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(data + col / 2)));
    const __m256i hi_codes = _mm256_srli_epi32(d, 4);
    const __m256 lo =
        _mm256_xor_ps(_mm256_permutevar8x32_ps(magnitudes, d),
                      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(d, bit3), 28)));
    const __m256 hi =
        _mm256_xor_ps(_mm256_permutevar8x32_ps(magnitudes, hi_codes),
                      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(hi_codes, bit3), 28)));
    const __m256 pairs_lo = _mm256_unpacklo_ps(lo, hi), pairs_hi = _mm256_unpackhi_ps(lo, hi);
    const __m256 scale =
        _mm256_set1_ps(kNv ? tab.e4m3[scales[col / 16]] : tab.e8m0[scales[col / 32]]);
    _mm256_store_ps(out + c,
                    _mm256_mul_ps(_mm256_permute2f128_ps(pairs_lo, pairs_hi, 0x20), scale));
    _mm256_store_ps(out + c + 8,
                    _mm256_mul_ps(_mm256_permute2f128_ps(pairs_lo, pairs_hi, 0x31), scale));
  }
  for (; c < valid; c += 2) {  // a tail of whole bytes (the layouts' widths are even)
    const int64_t col = c0 + c;
    const float scale = kNv ? tab.e4m3[scales[col / 16]] : tab.e8m0[scales[col / 32]];
    out[c] = tab.e2m1[data[col / 2] & 0x0F] * scale;
    out[c + 1] = tab.e2m1[data[col / 2] >> 4] * scale;
  }
}
#endif

// The scale of row r's sum: FP8 per channel's, NVFP4's global one, else 1.
inline float row_scale(const WeightView& w, int64_t r) {
  if (w.format == WeightFormat::kFp8Channel) return load_f32(w.scales, r);
  if (w.format == WeightFormat::kNvfp4) return w.global_scale;
  return 1.0f;
}

// Columns [c0, c0 + valid) of row r as exact f32 values at out, zeros up to `width` (c0 a
// multiple of 32, so MX and NVFP4 blocks start at it). Not FP8 tiles (gemm_f32_kernel).
MINIMAX_GF void decode_chunk(const WeightView& w, int64_t r, int64_t c0, int64_t valid,
                             int64_t width, float* out) {
  const uint8_t* p = w.data + r * weight_data_stride(w);
  const uint8_t* s = static_cast<const uint8_t*>(w.scales) + r * weight_scale_stride(w);
  switch (w.format) {
    case WeightFormat::kF32:
      std::memcpy(out, p + 4 * c0, static_cast<size_t>(valid) * 4);
      break;
    case WeightFormat::kBF16:
      decode_bf16(p, c0, valid, out);
      break;
    case WeightFormat::kFp8Channel:
    case WeightFormat::kFp8Block:  // the codes; the tile scales go on the activations
      decode_e4m3<false>(p, nullptr, c0, valid, out);
      break;
    case WeightFormat::kMxfp8:
      decode_e4m3<true>(p, s, c0, valid, out);
      break;
    case WeightFormat::kMxfp4:
      decode_e2m1<false>(p, s, c0, valid, out);
      break;
    case WeightFormat::kNvfp4:
      decode_e2m1<true>(p, s, c0, valid, out);
      break;
  }
  std::fill(out + valid, out + width, 0.0f);
}

// part[t][r] = Σ over columns [0, cols) of w[r]·x[t] for R rows × T tokens (cols a multiple of
// the lanes; w rows w_stride floats apart, x rows x_stride apart, both 64-byte aligned).
template <int R, int T>
MINIMAX_GF void tile(const float* w, int64_t w_stride, const float* x, int64_t x_stride,
                     int64_t cols, float* part) {
  constexpr int L = V::kLanes;
  typename V::T acc[R][T];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) acc[r][t] = V::zero();
  for (int64_t c = 0; c < cols; c += L) {
    typename V::T wv[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) wv[r] = V::load(w + r * w_stride + c);
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) {
      const typename V::T xv = V::load(x + t * x_stride + c);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) acc[r][t] = V::fma(wv[r], xv, acc[r][t]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int t = 0; t < T; ++t) part[t * R + r] = V::sum(acc[r][t]);
}

using TileFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float*);

template <int R, int... Ts>
constexpr auto tiles_of_rows(std::integer_sequence<int, Ts...>) {
  return std::array<TileFn, sizeof...(Ts)>{tile<R, Ts + 1>...};
}

// The tile for r rows (1..kRows) × t tokens (1..kTokens).
inline TileFn tile_for(int r, int t) {
  static const auto table = []<int... Rs>(std::integer_sequence<int, Rs...>) {
    return std::array<std::array<TileFn, V::kTokens>, V::kRows>{
        tiles_of_rows<Rs + 1>(std::make_integer_sequence<int, V::kTokens>())...};
  }
  (std::make_integer_sequence<int, V::kRows>());
  return table[r - 1][t - 1];
}

// xs = xb times each column's FP8 tile scale in tile row `tile_row` (n tokens, chunk c0 of `nc`
// columns of which `valid` are the weight's; the rest stay zero).
MINIMAX_GF void scale_activations(const WeightView& w, int64_t tile_row, int64_t c0, int64_t valid,
                                  const float* xb, int64_t n, int64_t nc, float* xs) {
  const int64_t scale_cols = weight_scale_stride(w) / 4;
  float scale[kChunkCols];
  for (int64_t c = 0; c < valid; ++c)
    scale[c] = load_f32(w.scales, tile_row * scale_cols + (c0 + c) / w.block_cols);
  std::fill(scale + valid, scale + nc, 0.0f);
  for (int64_t t = 0; t < n; ++t)
    for (int64_t c = 0; c < nc; ++c) xs[t * nc + c] = xb[t * nc + c] * scale[c];
}

// Requests the bytes of columns [c0, c0 + valid) of rows [r0, r1) into L2: the next row group's,
// while this one's tiles run (a chunk is a short run of each row, which the hardware prefetchers
// alone leave waiting on memory).
MINIMAX_GF_INLINE void prefetch_chunk(const WeightView& w, int64_t r0, int64_t r1, int64_t c0,
                                      int64_t valid) {
  const int bits = w.format == WeightFormat::kF32                                         ? 32
                   : w.format == WeightFormat::kBF16                                      ? 16
                   : w.format == WeightFormat::kMxfp4 || w.format == WeightFormat::kNvfp4 ? 4
                                                                                          : 8;
  const int64_t stride = weight_data_stride(w), begin = c0 * bits / 8,
                end = (c0 + valid) * bits / 8;
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t b = begin; b < end; b += 64)
      _mm_prefetch(reinterpret_cast<const char*>(w.data + r * stride + b), _MM_HINT_T1);
}

// Column chunks outer, so that a token block holds only its chunk of the activations (up to 128
// tokens at 1024 columns in 512 KiB of L2) and each chunk of a weight row is decoded once per 128
// tokens whatever the width; then token blocks, row groups (decoded into the panel) and token
// groups. The chunks' sums are added into y in column order, and the row scales multiply y last.
MINIMAX_GF void gemm_rows(const WeightView& w, const float* x, int64_t tokens, float* y,
                          int64_t row_begin, int64_t row_end) {
  constexpr int L = V::kLanes;
  constexpr int R = V::kRows, T = V::kTokens;
  const int64_t cols = w.cols, rows = w.rows;
  const int64_t padded = (cols + L - 1) / L * L;
  const int64_t chunk = std::min(kChunkCols, padded);
  const int64_t block = std::clamp<int64_t>(kBlockBytes / (4 * chunk), T, kMaxBlockTokens);
  thread_local AlignedScratch x_scratch, xs_scratch, panel_scratch;
  auto* xb = static_cast<float*>(x_scratch.get(sizeof(float) * std::min(block, tokens) * chunk));
  const bool tiles = w.format == WeightFormat::kFp8Block;
  auto* xs =
      tiles ? static_cast<float*>(xs_scratch.get(sizeof(float) * std::min(block, tokens) * chunk))
            : nullptr;
  // 64 floats of slack: the decoders write whole vectors past a row's last column.
  auto* panel =
      static_cast<float*>(panel_scratch.get(sizeof(float) * (V::kGroups * R * chunk + 64)));
  for (int64_t c0 = 0; c0 < padded; c0 += chunk) {
    const int64_t nc = std::min(chunk, padded - c0);              // whole vectors
    const int64_t valid = std::clamp<int64_t>(cols - c0, 0, nc);  // columns of the weight
    for (int64_t t0 = 0; t0 < tokens; t0 += block) {
      const int64_t n = std::min(block, tokens - t0);
      for (int64_t t = 0; t < n; ++t) {
        std::memcpy(xb + t * nc, x + (t0 + t) * cols + c0, sizeof(float) * valid);
        std::fill(xb + t * nc + valid, xb + (t + 1) * nc, 0.0f);
      }
      const float* xr = xb;  // the activations the tiles read (FP8 tiles: times the scales)
      int64_t scaled_tile_row = -1;
      for (int64_t r0 = row_begin; r0 < row_end;) {
        // A pass: up to V::kGroups groups of R rows, sharing each token group's activations (read
        // from L2 by the first group's tile, from L1 by the others').
        int64_t pass_end = std::min(r0 + V::kGroups * R, row_end);
        if (tiles) {
          // A pass stays within one tile row; its activations times that row's scales.
          const int64_t tile_row = r0 / w.block_rows;
          pass_end = std::min(pass_end, (tile_row + 1) * w.block_rows);
          if (tile_row != scaled_tile_row)
            scale_activations(w, tile_row, c0, valid, xb, n, nc, xs), scaled_tile_row = tile_row;
          xr = xs;
        }
        const int np = static_cast<int>(pass_end - r0);
        for (int i = 0; i < np; ++i) decode_chunk(w, r0 + i, c0, valid, nc, panel + i * nc);
        prefetch_chunk(w, pass_end, std::min(pass_end + V::kGroups * R, row_end), c0, valid);
        for (int64_t t = 0; t < n; t += T) {
          const int nt = static_cast<int>(std::min<int64_t>(T, n - t));
          for (int g0 = 0; g0 < np; g0 += R) {
            const int nr = std::min(R, np - g0);
            float part[kMaxRows * 4];
            tile_for(nr, nt)(panel + g0 * nc, nc, xr + t * nc, nc, nc, part);
            float* yr = y + (t0 + t) * rows + r0 + g0;
            for (int tt = 0; tt < nt; ++tt)
              for (int i = 0; i < nr; ++i) {
                float& out = yr[tt * rows + i];
                out = c0 == 0 ? part[tt * nr + i] : out + part[tt * nr + i];
              }
          }
        }
        r0 = pass_end;
      }
    }
  }
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float scale = row_scale(w, r);
    if (scale != 1.0f)
      for (int64_t t = 0; t < tokens; ++t) y[t * rows + r] *= scale;
  }
}

}  // namespace

// The f32 GEMM at this level (every layout: FP8 tiles with their scales on the activations).
GemmRowsFn gemm_f32_kernel(const WeightView&) { return gemm_rows; }

}  // namespace minimax::cpu_linear_detail::MINIMAX_GF_NAMESPACE

#undef MINIMAX_GF
#undef MINIMAX_GF_INLINE
#undef MINIMAX_GF_NAMESPACE
