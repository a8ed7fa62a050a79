// The weight panels of the batch GEMMs: each decodes a chunk of one weight row to bf16, in column
// order. The AMX GEMM (linear_amx.cc) takes every panel as its tile rows; the vdpbf16ps GEMM
// (linear_gemm.cc) takes the FP8 and FP4 ones as its rows. AVX-512 with AVX512_BF16 and VBMI: no
// tile instruction in here. The f32 GEMM (linear_gemm_f32-inl.h, no AVX512_BF16) uses only
// bf16_to_f32 and e2m1_to_f32, which need none.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/linear_avx512-inl.h"
#include "kernels/cpu/linear_bf16_split-inl.h"
#include "kernels/cpu/linear_fp8-inl.h"

namespace minimax::cpu_linear_detail {
namespace {

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
    e4m3_row_to_bf16(tables, data + r * stride + c0, cols - c0, width, hi);
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

// The bytes of the next step's panel chunk (columns [c0, c0 + width) of its rows) requested into
// L2 a few lines at a time while this step runs (the AMX GEMM and the vdpbf16ps GEMM). A panel
// reads each row's chunk (128-1024 bytes) and moves on to the next row: streams too short for the
// hardware prefetchers. Requested all at once before the step (256 lines), they overlapped nothing
// on the Intel Xeon with AMX: past the core's few line fill buffers each prefetch waits for an
// earlier one to come back, so the burst took as long as reading the chunk (a scratch loop: 16 KB
// pieces, 1.1 us of reads beside 2.1 us of work, cost 3.2-3.5 us per piece prefetched in a burst
// one piece ahead, 2.3 us in steps).
struct PanelPrefetch {
  uintptr_t base = 0;  // the first row's first byte of the chunk
  int64_t stride = 0, bytes = 0, rows = 0;
  int64_t row = 0, offset = 0;  // the next line
  int64_t per_call = 0;         // lines per issue()

  // `rows` rows of `bytes` each, `stride` apart from `first`, spread over `calls` calls of issue().
  // Integer arithmetic: the rows may lie past the matrix (prefetch allows that).
  static PanelPrefetch spread(uintptr_t first, int64_t stride, int64_t bytes, int64_t rows,
                              int64_t calls) {
    const int64_t lines = rows * ((bytes + 63) / 64);
    return {first, stride, bytes, rows, 0, 0, (lines + calls - 1) / calls};
  }
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void issue() {
    for (int64_t i = 0; i < per_call && row < rows; ++i) {
      // Integer arithmetic: past the last column the address may lie outside the matrix
      // (prefetch allows that; it is never dereferenced).
      _mm_prefetch(
          reinterpret_cast<const char*>(base + static_cast<uintptr_t>(row * stride + offset)),
          _MM_HINT_T1);
      offset += 64;
      if (offset >= bytes) {
        offset = 0;
        ++row;
      }
    }
  }
  // Whatever is left (the step ended before its share ran out).
  MINIMAX_AVX512 void finish() {
    per_call = rows * bytes;
    issue();
  }
};

// Panels whose sums are scaled per segment of columns (FP8 tiles), not once per row.
template <class Src>
constexpr bool kScaledSegments = requires {
  Src::kScaledSegments;
};

}  // namespace
}  // namespace minimax::cpu_linear_detail
