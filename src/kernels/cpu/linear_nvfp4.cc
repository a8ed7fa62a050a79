// NVFP4 weights (16 e2m1 elements per e4m3fn scale, times a per-tensor f32 global scale), f32
// activations. Elements decode exactly to f32 (linear_fp4-inl.h); each 16-element block's partial
// sum is multiplied by its e4m3 scale, and the row's sum by the global scale (AVX-512), or each
// block's by e4m3(scale) · global_scale rounded once to f32 (AVX2).
#define MINIMAX_AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,fma,f16c,bmi,bmi2"
#include <cstring>

#include "kernels/cpu/linear_avx2-inl.h"
#include "kernels/cpu/linear_avx512-inl.h"
#include "kernels/cpu/linear_fp4-inl.h"
#include "kernels/cpu/linear_fp8-inl.h"

namespace minimax::cpu_linear_detail {
namespace {

struct Nvfp4Avx512 {
  static constexpr int kChunkCols = 128, kVectors = 8, kGroups = 1;
  static constexpr bool kBf16X = false;
  using Vec = __m512;
  const uint8_t* data;
  const uint8_t* scales;
  int64_t row_bytes, scales_per_row;
  int64_t prefetch_ahead = prefetch_ahead_bytes(row_bytes);
  Fp4Elements512 elements;
  E4m3Tables512 tables;
  __m512i spread = spread_index512(2, 1, 0);  // dword j holds columns of block j / 2
  float global;

  MINIMAX_AVX512 explicit Nvfp4Avx512(const WeightView& w)
      : data(w.data),
        scales(static_cast<const uint8_t*>(w.scales)),
        row_bytes(weight_data_stride(w)),
        scales_per_row(weight_scale_stride(w)),
        global(w.global_scale) {}
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid,
                                                 __m512* w) const {
    elements.decode<kTail>(data + row * row_bytes + c * 64, prefetch_ahead, valid, w);
  }
  static constexpr int group(int) { return 0; }
  template <bool kTail>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void chunk_scales(int64_t row, int64_t c, int valid,
                                                         __m512* s) const {
    s[0] = nvfp4_scales512(tables, scales + row * scales_per_row + c * 8,
                           kTail ? static_cast<size_t>(valid / 16) : 8, spread);
  }
  float row_scale(int64_t) const { return global; }
};

struct Nvfp4Avx2 {
  static constexpr int kChunkCols = 64, kVectors = 8, kGroups = 2;
  const uint8_t* data;
  const uint8_t* scales;
  int64_t row_bytes, scales_per_row;
  const float* e4m3;
  float global;
  Fp4Elements256 elements;

  MINIMAX_AVX2 explicit Nvfp4Avx2(const WeightView& w)
      : data(w.data),
        scales(static_cast<const uint8_t*>(w.scales)),
        row_bytes(weight_data_stride(w)),
        scales_per_row(weight_scale_stride(w)),
        e4m3(decode_tables().e4m3),
        global(w.global_scale) {}
  template <bool kTail>
  MINIMAX_AVX2 MINIMAX_ALWAYS_INLINE void load(int64_t row, int64_t c, int valid, __m256* w) const {
    elements.decode<kTail>(data + row * row_bytes + c * 32, valid, w);
  }
  // Vector 4n + 2s + q, lane L holds columns of block 2L + s: group s.
  static constexpr int group(int k) { return (k >> 1) & 1; }
  template <bool kTail>
  MINIMAX_AVX2 MINIMAX_ALWAYS_INLINE void chunk_scales(int64_t row, int64_t c, int valid,
                                                       __m256* s) const {
    const uint8_t* codes = scales + row * scales_per_row + c * 4;
    const int blocks = kTail ? valid / 16 : 4;
    float b[4];
    for (int i = 0; i < 4; ++i) b[i] = i < blocks ? e4m3[codes[i]] * global : 0.0f;
    s[0] = _mm256_setr_m128(_mm_set1_ps(b[0]), _mm_set1_ps(b[2]));
    s[1] = _mm256_setr_m128(_mm_set1_ps(b[1]), _mm_set1_ps(b[3]));
  }
  float row_scale(int64_t) const { return 1.0f; }
};

}  // namespace

RowKernel nvfp4_kernel(CpuIsa isa) {
  RowKernel k;
  if (isa == CpuIsa::kAvx512) {
    k.run = rows512<Nvfp4Avx512>;
    k.chunk_cols = Nvfp4Avx512::kChunkCols;
    k.order = fp4_order_avx512();
  } else if (isa == CpuIsa::kAvx2) {
    k.run = rows256<Nvfp4Avx2>;
    k.chunk_cols = Nvfp4Avx2::kChunkCols;
    k.order = fp4_order_avx2();
  }
  return k;
}

}  // namespace minimax::cpu_linear_detail
