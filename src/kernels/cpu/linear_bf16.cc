// bf16 weights with f32 activations: a 32-bit lane holds two bf16 weights; shifting it left by 16
// gives the even one as f32 and masking the low half gives the odd one, so the activations are
// stored even columns first, then odd, per chunk: the order every f32 kernel follows
// (even_odd_order, linear_internal.h).
#define MINIMAX_AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,fma,f16c,bmi,bmi2"
#include "kernels/cpu/linear_avx2-inl.h"
#include "kernels/cpu/linear_avx512-inl.h"

namespace minimax::cpu_linear_detail {
namespace {

struct Bf16Avx512 {
  static constexpr RowsApart kRowsApart = RowsApart::kWithoutAmx;  // see rows_apart
  static constexpr int kChunkCols = 32, kVectors = 2, kGroups = 0;
  static constexpr bool kBf16X = false;
  using Vec = __m512;
  const uint8_t* data;
  int64_t row_bytes;
  int64_t prefetch_ahead = prefetch_ahead_bytes(row_bytes);

  MINIMAX_AVX512 explicit Bf16Avx512(const WeightView& w)
      : data(w.data), row_bytes(weight_data_stride(w)) {}
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid,
                                                 __m512* w) const {
    const uint8_t* p = data + row * row_bytes + c * 64;
    prefetch512<kTail>(p, prefetch_ahead);
    const __m512i v = kTail
                          ? _mm512_maskz_loadu_epi16(static_cast<__mmask32>(first_bytes(valid)), p)
                          : _mm512_loadu_si512(p);
    w[0] = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
    w[1] = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32(int32_t(0xFFFF0000u))));
  }
  static constexpr int group(int) { return 0; }
  float row_scale(int64_t) const { return 1.0f; }
};

struct Bf16Avx2 {
  static constexpr RowsApart kRowsApart = RowsApart::kNo;  // see rows_apart
  static constexpr int kChunkCols = 16, kVectors = 2, kGroups = 0;
  const uint8_t* data;
  int64_t row_bytes;

  MINIMAX_AVX2 explicit Bf16Avx2(const WeightView& w)
      : data(w.data), row_bytes(weight_data_stride(w)) {}
  template <bool kTail>
  MINIMAX_AVX2 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid, __m256* w) const {
    const uint8_t* p = data + row * row_bytes + c * 32;
    prefetch256<kTail>(p);
    __m256i v;
    if constexpr (kTail) {
      const TailBuffer<32> tail(p, 2 * valid);
      v = _mm256_load_si256(reinterpret_cast<const __m256i*>(tail.bytes));
    } else {
      v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    }
    w[0] = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
    w[1] = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(int32_t(0xFFFF0000u))));
  }
  static constexpr int group(int) { return 0; }
  float row_scale(int64_t) const { return 1.0f; }
};

}  // namespace

RowKernel bf16_kernel(CpuIsa isa) {
  RowKernel k;
  if (isa == CpuIsa::kAvx512) {
    k.run = rows512<Bf16Avx512>;
    k.chunk_cols = Bf16Avx512::kChunkCols;
    k.order = even_odd_order<Bf16Avx512::kChunkCols, 32>();
  } else if (isa == CpuIsa::kAvx2) {
    k.run = rows256<Bf16Avx2>;
    k.chunk_cols = Bf16Avx2::kChunkCols;
    k.order = even_odd_order<Bf16Avx2::kChunkCols, 16>();
  }
  return k;
}

}  // namespace minimax::cpu_linear_detail
