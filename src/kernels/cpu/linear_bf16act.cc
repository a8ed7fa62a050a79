// Kernels with bf16 activations (ActivationPrecision::kBF16 and kBF16x2), AVX-512 + AVX512_BF16:
// the weights decode to bf16 pairs (exact for bf16, e4m3fn and e2m1 values) and vdpbf16ps
// multiplies them with the activations rounded to bf16 (kBF16), or with both halves of each
// activation split into bf16 hi + lo (kBF16x2), accumulating in f32. The weights skip the
// conversion to f32, so there are fewer instructions per weight byte than in the f32-activation
// kernels: FP8, 13 per 64 bytes with f32 activations, 7 with bf16, 9 with hi + lo.
#define MINIMAX_AVX512_TARGET \
  "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512bf16,fma,f16c,bmi,bmi2"
#include <array>

#include "kernels/cpu/linear_avx2-inl.h"
#include "kernels/cpu/linear_avx512-inl.h"
#include "kernels/cpu/linear_fp4-inl.h"
#include "kernels/cpu/linear_fp8-inl.h"

namespace minimax::cpu_linear_detail {
namespace {

struct Bf16Bf16x {
  static constexpr RowsApart kRowsApart = RowsApart::kNo;  // see rows_apart
  static constexpr int kChunkCols = 32, kVectors = 1, kGroups = 0;
  static constexpr bool kBf16X = true;
  using Vec = __m512i;
  const uint8_t* data;
  int64_t row_bytes;
  int64_t prefetch_ahead = prefetch_ahead_bytes(row_bytes);

  MINIMAX_AVX512 explicit Bf16Bf16x(const WeightView& w)
      : data(w.data), row_bytes(weight_data_stride(w)) {}
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid,
                                                 __m512i* w) const {
    const uint8_t* p = data + row * row_bytes + c * 64;
    prefetch512<kTail>(p, prefetch_ahead);
    w[0] = kTail ? _mm512_maskz_loadu_epi16(static_cast<__mmask32>(first_bytes(valid)), p)
                 : _mm512_loadu_si512(p);
  }
  static constexpr int group(int) { return 0; }
  float row_scale(int64_t) const { return 1.0f; }
};

// kCols columns per chunk (64, or 128 for tiles 128 or a multiple wide: one scale multiply per
// row and 128 columns instead of two, which the 1-token decode is short of).
template <Fp8Scaling kScaling, int kCols = 64>
struct Fp8Bf16x {
  static constexpr int kChunkCols = kCols, kVectors = kCols / 32;
  static constexpr int kGroups = kScaling == Fp8Scaling::kChannel ? 0 : 1;
  static constexpr bool kBf16X = true;
  using Vec = __m512i;
  const uint8_t* data;
  int64_t row_bytes;  // bytes from one row to the next
  int64_t prefetch_ahead = prefetch_ahead_bytes(row_bytes);
  Fp8ChunkScales<kScaling> scales;
  E4m3Tables512 tables;

  MINIMAX_AVX512 explicit Fp8Bf16x(const WeightView& w)
      : data(w.data), row_bytes(weight_data_stride(w)), scales(w) {}
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid,
                                                 __m512i* w) const {
#pragma GCC unroll 2
    for (int piece = 0; piece < kCols / 64; ++piece) {
      const uint8_t* p = data + row * row_bytes + c * kCols + 64 * piece;
      prefetch512<kTail>(p, prefetch_ahead);
      tables.pairs(kTail ? load_codes(p, valid - 64 * piece) : _mm512_loadu_si512(p),
                   w + 2 * piece);
    }
  }
  static constexpr int group(int) { return 0; }
  // fp8_order_bf16x puts a chunk's first 32-column block in lanes 0-1 of both vectors.
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void chunk_scales(int64_t row, int64_t c, int valid,
                                                         __m512* s) const {
    static_assert(kCols == 64 || kScaling == Fp8Scaling::kTile);
    s[0] = scales.template chunk<kTail>(row, c * (kCols / 64), valid);
  }
  float row_scale(int64_t row) const { return scales.row_scale(row); }
};

struct Mxfp4Bf16x {
  static constexpr int kChunkCols = 128, kVectors = 4, kGroups = 1;
  static constexpr bool kBf16X = true;
  using Vec = __m512i;
  const uint8_t* data;
  const uint8_t* scales;
  int64_t row_bytes, scales_per_row;
  int64_t prefetch_ahead = prefetch_ahead_bytes(row_bytes);
  Fp4Pairs512 elements;

  MINIMAX_AVX512 explicit Mxfp4Bf16x(const WeightView& w)
      : data(w.data),
        scales(static_cast<const uint8_t*>(w.scales)),
        row_bytes(weight_data_stride(w)),
        scales_per_row(weight_scale_stride(w)) {}
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid,
                                                 __m512i* w) const {
    elements.decode<kTail>(data + row * row_bytes + c * 64, prefetch_ahead, valid, w);
  }
  static constexpr int group(int) { return 0; }
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void chunk_scales(int64_t row, int64_t c, int valid,
                                                         __m512* s) const {
    s[0] = mxfp4_scales512(scales + row * scales_per_row + c * 4,
                           kTail ? static_cast<size_t>(valid / 32) : 4);
  }
  float row_scale(int64_t) const { return 1.0f; }
};

// Vector 2n + s, lane L holds columns of block 2L + s: two scale groups.
struct Nvfp4Bf16x {
  static constexpr int kChunkCols = 128, kVectors = 4, kGroups = 2;
  static constexpr bool kBf16X = true;
  using Vec = __m512i;
  const uint8_t* data;
  const uint8_t* scales;
  int64_t row_bytes, scales_per_row;
  int64_t prefetch_ahead = prefetch_ahead_bytes(row_bytes);
  Fp4Pairs512 elements;
  E4m3Tables512 tables;
  __m512i spread[2] = {spread_index512(4, 2, 0), spread_index512(4, 2, 1)};
  float global;

  MINIMAX_AVX512 explicit Nvfp4Bf16x(const WeightView& w)
      : data(w.data),
        scales(static_cast<const uint8_t*>(w.scales)),
        row_bytes(weight_data_stride(w)),
        scales_per_row(weight_scale_stride(w)),
        global(w.global_scale) {}
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid,
                                                 __m512i* w) const {
    elements.decode<kTail>(data + row * row_bytes + c * 64, prefetch_ahead, valid, w);
  }
  static constexpr int group(int k) { return k & 1; }
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void chunk_scales(int64_t row, int64_t c, int valid,
                                                         __m512* s) const {
    const uint8_t* codes = scales + row * scales_per_row + c * 8;
    const size_t blocks = kTail ? static_cast<size_t>(valid / 16) : 8;
    s[0] = nvfp4_scales512(tables, codes, blocks, spread[0]);
    s[1] = nvfp4_scales512(tables, codes, blocks, spread[1]);
  }
  float row_scale(int64_t) const { return global; }
};

template <class D>
RowKernel bf16x(const uint16_t* order, bool split) {
  RowKernel k;
  k.run = split ? rows512<D, true> : rows512<D, false>;
  k.chunk_cols = D::kChunkCols;
  k.order = order;
  k.bf16_x = true;
  k.split_x = split;
  return k;
}

}  // namespace

RowKernel bf16x_kernel(const WeightView& w, bool split) {
  using F = Fp8Scaling;
  switch (w.format) {
    case WeightFormat::kF32:
      return {};
    case WeightFormat::kBF16:
      return bf16x<Bf16Bf16x>(nullptr, split);
    case WeightFormat::kFp8Channel:
      return bf16x<Fp8Bf16x<F::kChannel>>(fp8_order_bf16x<64>(), split);
    case WeightFormat::kFp8Block:
      if (w.block_cols % 128 == 0)
        return bf16x<Fp8Bf16x<F::kTile, 128>>(fp8_order_bf16x<128>(), split);
      if (w.block_cols % 64 != 0) return {};
      return bf16x<Fp8Bf16x<F::kTile>>(fp8_order_bf16x<64>(), split);
    case WeightFormat::kMxfp8:
      return bf16x<Fp8Bf16x<F::kMx>>(fp8_order_bf16x<64>(), split);
    case WeightFormat::kMxfp4:
      return bf16x<Mxfp4Bf16x>(fp4_order_bf16x(), split);
    case WeightFormat::kNvfp4:
      return bf16x<Nvfp4Bf16x>(fp4_order_bf16x(), split);
  }
  return {};
}

}  // namespace minimax::cpu_linear_detail
