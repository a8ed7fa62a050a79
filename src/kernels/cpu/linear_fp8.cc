// e4m3fn weights with a scale per row (kFp8Channel), per tile (kFp8Block) or an e8m0 scale per 32
// columns (kMxfp8), f32 activations: one decode of the codes, three ways to find the scales. Both
// levels leave the columns in the shared even/odd order (even_odd_order, linear_internal.h).
// AVX-512: two vpermt2b lookups turn 64 codes into the low and high bytes of their bf16 values
// (exact for every code, NaN included), unpacking interleaves them into bf16 pairs, and a shift or
// a mask makes f32 of each half. AVX2: a code shifted into an f16 bit pattern is the value times
// 2^-8 for every code (subnormals included), vcvtph2ps converts, the 2^8 goes into the scale.
#define MINIMAX_AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,fma,f16c,bmi,bmi2"
#include <cstring>

#include "kernels/cpu/linear_avx2-inl.h"
#include "kernels/cpu/linear_avx512-inl.h"
#include "kernels/cpu/linear_fp8-inl.h"

namespace minimax::cpu_linear_detail {
namespace {

template <Fp8Scaling kScaling>
struct Fp8Avx512 {
  static constexpr int kChunkCols = 64, kVectors = 4;
  // Tiles: one scale per chunk; MX: vectors 0-1 and 2-3 are its two 32-column blocks.
  static constexpr int kGroups =
      kScaling == Fp8Scaling::kChannel ? 0 : (kScaling == Fp8Scaling::kMx ? 2 : 1);
  static constexpr bool kBf16X = false;
  using Vec = __m512;
  const uint8_t* data;
  int64_t row_bytes;  // bytes from one row to the next
  int64_t prefetch_ahead = prefetch_ahead_bytes(row_bytes);
  Fp8ChunkScales<kScaling> scales;
  E4m3Tables512 tables;

  MINIMAX_AVX512 explicit Fp8Avx512(const WeightView& w)
      : data(w.data), row_bytes(weight_data_stride(w)), scales(w) {}
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid,
                                                 __m512* w) const {
    const uint8_t* p = data + row * row_bytes + c * 64;
    prefetch512<kTail>(p, prefetch_ahead);
    const __m512i raw =
        kTail ? _mm512_maskz_loadu_epi8(first_bytes(valid), p) : _mm512_loadu_si512(p);
    // Qwords L and 4 + L side by side in lane L, so that unpacking in pairs() leaves codes 0-31
    // in pairs[0] and 32-63 in pairs[1], in column order: the shift takes the even columns of
    // each 32, the mask the odd ones.
    const __m512i codes = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 4, 1, 5, 2, 6, 3, 7), raw);
    __m512i pairs[2];
    tables.pairs(codes, pairs);
    const __m512i high_half = _mm512_set1_epi32(int32_t(0xFFFF0000u));
    w[0] = _mm512_castsi512_ps(_mm512_slli_epi32(pairs[0], 16));
    w[1] = _mm512_castsi512_ps(_mm512_and_si512(pairs[0], high_half));
    w[2] = _mm512_castsi512_ps(_mm512_slli_epi32(pairs[1], 16));
    w[3] = _mm512_castsi512_ps(_mm512_and_si512(pairs[1], high_half));
  }
  static constexpr int group(int k) { return kScaling == Fp8Scaling::kMx ? k / 2 : 0; }
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void chunk_scales(int64_t row, int64_t c, int valid,
                                                         __m512* s) const {
    if constexpr (kScaling == Fp8Scaling::kMx) {
      const uint8_t* codes = scales.mx.row(row) + c * 2;
      s[0] = _mm512_set1_ps(scales.mx.value(codes[0]));
      s[1] = _mm512_set1_ps(!kTail || valid > 32 ? scales.mx.value(codes[1]) : 0.0f);
    } else {
      s[0] = _mm512_set1_ps(scales.scales.tile(row, c * kChunkCols));
    }
  }
  float row_scale(int64_t row) const { return scales.row_scale(row); }
};

template <Fp8Scaling kScaling>
struct Fp8Avx2 {
  static constexpr int kChunkCols = 16, kVectors = 2;
  static constexpr int kGroups = kScaling == Fp8Scaling::kChannel ? 0 : 1;
  static constexpr float kF16Bias = 256.0f;  // f16 pattern value = e4m3 value · 2^-8
  const uint8_t* data;
  int64_t row_bytes;  // bytes from one row to the next
  Fp8Scales scales;
  MxScales mx;

  MINIMAX_AVX2 explicit Fp8Avx2(const WeightView& w)
      : data(w.data), row_bytes(weight_data_stride(w)), scales(w), mx(w) {}
  template <bool kTail>
  MINIMAX_AVX2 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid, __m256* w) const {
    const uint8_t* p = data + row * row_bytes + c * 16;
    prefetch256<kTail>(p);
    __m128i raw;
    if constexpr (kTail) {
      const TailBuffer<16> tail(p, valid);
      raw = _mm_load_si128(reinterpret_cast<const __m128i*>(tail.bytes));
    } else {
      raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    }
    // Even codes first, then odd: w[0] gets the even columns, w[1] the odd ones.
    raw =
        _mm_shuffle_epi8(raw, _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
    // S.EEEE.MMM -> S.0EEEE.MMM0000000 (f16, exponent bias 15 instead of 7): sign-extended to 16
    // bits and shifted left by 7, a negative code leaves ones in bits 15 and 14; bit 14 cleared.
    const __m256i code16 = _mm256_cvtepi8_epi16(raw);
    __m256i h = _mm256_and_si256(_mm256_slli_epi16(code16, 7), _mm256_set1_epi16(int16_t(0xBFFF)));
    // The NaN codes S.1111.111 land on a finite f16 (0x3F80); set the exponent to all ones.
    const __m256i nan = _mm256_cmpeq_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7FFF)),
                                           _mm256_set1_epi16(0x3F80));
    h = _mm256_or_si256(h, _mm256_and_si256(nan, _mm256_set1_epi16(0x7E00)));
    w[0] = _mm256_cvtph_ps(_mm256_castsi256_si128(h));
    w[1] = _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1));
  }
  static constexpr int group(int) { return 0; }
  // A 16-column chunk lies inside one tile or one 32-column MX block. The MX scale is applied
  // as it is and the 2^8 per row, so a large e8m0 scale times 2^8 cannot overflow.
  template <bool kTail>
  MINIMAX_AVX2 MINIMAX_ALWAYS_INLINE void chunk_scales(int64_t row, int64_t c, int,
                                                       __m256* s) const {
    if constexpr (kScaling == Fp8Scaling::kMx) {
      s[0] = _mm256_set1_ps(mx.value(mx.row(row)[c / 2]));
    } else {
      s[0] = _mm256_set1_ps(scales.tile(row, c * kChunkCols) * kF16Bias);
    }
  }
  float row_scale(int64_t row) const {
    switch (kScaling) {
      case Fp8Scaling::kChannel:
        return scales.channel(row) * kF16Bias;
      case Fp8Scaling::kTile:
        return 1.0f;
      case Fp8Scaling::kMx:
        return kF16Bias;
    }
    return 1.0f;
  }
};

}  // namespace

RowKernel fp8_kernel(CpuIsa isa, const WeightView& w) {
  const bool block = w.format == WeightFormat::kFp8Block;
  RowKernel k;
  if (isa == CpuIsa::kAvx512) {
    using F = Fp8Scaling;
    // A chunk must not straddle two tiles; the published tile is 128 columns.
    if (block && w.block_cols % Fp8Avx512<F::kTile>::kChunkCols != 0) return k;
    k.run = block                              ? rows512<Fp8Avx512<F::kTile>>
            : w.format == WeightFormat::kMxfp8 ? rows512<Fp8Avx512<F::kMx>>
                                               : rows512<Fp8Avx512<F::kChannel>>;
    k.chunk_cols = 64;
    k.order = even_odd_order<64, 32>();
  } else if (isa == CpuIsa::kAvx2) {
    using F = Fp8Scaling;
    if (block && w.block_cols % Fp8Avx2<F::kTile>::kChunkCols != 0) return k;
    k.run = block                              ? rows256<Fp8Avx2<F::kTile>>
            : w.format == WeightFormat::kMxfp8 ? rows256<Fp8Avx2<F::kMx>>
                                               : rows256<Fp8Avx2<F::kChannel>>;
    k.chunk_cols = 16;
    k.order = even_odd_order<16, 16>();
  }
  return k;
}

}  // namespace minimax::cpu_linear_detail
