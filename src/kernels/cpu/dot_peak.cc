// Register-only loops of the linear kernels' multiply-add instructions (kernels/cpu/dot_peak.h).
// Each keeps kDotChains accumulators in registers (distinct start values, or the compiler merges
// the identical chains into one) and feeds them the same two operands; an empty asm statement makes
// one operand opaque each iteration so that the compiler cannot fold the loop.
#include "kernels/cpu/dot_peak.h"

#include <immintrin.h>

#include "base/error.h"
#include "kernels/cpu/gcc12_avx512_warnings-inl.h"
#include "kernels/cpu/linear.h"

namespace minimax {
namespace {

#define MINIMAX_DOT_AVX512 __attribute__((target("avx512f,avx512bw,avx512bf16")))
#define MINIMAX_DOT_AVX2 __attribute__((target("avx2,fma")))
#define MINIMAX_DOT_AMX __attribute__((target("avx512f,amx-tile,amx-bf16")))

struct alignas(64) AmxConfig {
  uint8_t palette = 1, start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

// kDotChains tile products per iteration into four result tiles (tmm0-3) from two operand tiles of
// bf16 1.0 and ~1e-3; the sum is that of the first result tile.
MINIMAX_DOT_AMX double amx_loop(int64_t iterations) {
  static_assert(kDotChains % 4 == 0);
  const AmxConfig config;
  __asm__ volatile("ldtilecfg %0" ::"m"(config));
  alignas(64) uint16_t a[512], b[512];
  alignas(64) float c[256];
  for (int i = 0; i < 512; ++i) {
    a[i] = 0x3F80;
    b[i] = 0x3A83;
  }
  _tile_loadd(4, a, 64);
  _tile_loadd(5, b, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t k = 0; k < iterations; ++k)
    for (int i = 0; i < kDotChains / 4; ++i) {
      _tile_dpbf16ps(0, 4, 5);
      _tile_dpbf16ps(1, 4, 5);
      _tile_dpbf16ps(2, 4, 5);
      _tile_dpbf16ps(3, 4, 5);
    }
  _tile_stored(0, c, 64);
  _tile_release();
  double s = 0;
  for (float v : c) s += v;
  return s;
}

MINIMAX_DOT_AVX512 double dpbf16_loop(int64_t iterations) {
  __m512 acc[kDotChains];
#pragma GCC unroll 24
  for (int i = 0; i < kDotChains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  __m512i w = _mm512_set1_epi16(0x3F80);        // bf16 1.0
  const __m512i x = _mm512_set1_epi16(0x3A83);  // bf16 ~1e-3
  for (int64_t k = 0; k < iterations; ++k) {
#pragma GCC unroll 24
    for (int i = 0; i < kDotChains; ++i)
      acc[i] = _mm512_dpbf16_ps(acc[i], (__m512bh)w, (__m512bh)x);
    __asm__ volatile("" : "+v"(w));
  }
  __m512 s = acc[0];
  for (int i = 1; i < kDotChains; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

MINIMAX_DOT_AVX512 double fma_zmm_loop(int64_t iterations) {
  __m512 acc[kDotChains];
#pragma GCC unroll 24
  for (int i = 0; i < kDotChains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  __m512 w = _mm512_set1_ps(1.0f);
  const __m512 x = _mm512_set1_ps(1e-3f);
  for (int64_t k = 0; k < iterations; ++k) {
#pragma GCC unroll 24
    for (int i = 0; i < kDotChains; ++i) acc[i] = _mm512_fmadd_ps(w, x, acc[i]);
    __asm__ volatile("" : "+v"(w));
  }
  __m512 s = acc[0];
  for (int i = 1; i < kDotChains; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

// The same loop on 8-lane vectors.
MINIMAX_DOT_AVX2 double fma_ymm_loop(int64_t iterations) {
  __m256 acc[kDotChains];
#pragma GCC unroll 24
  for (int i = 0; i < kDotChains; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  __m256 w = _mm256_set1_ps(1.0f);
  const __m256 x = _mm256_set1_ps(1e-3f);
  for (int64_t k = 0; k < iterations; ++k) {
#pragma GCC unroll 24
    for (int i = 0; i < kDotChains; ++i) acc[i] = _mm256_fmadd_ps(w, x, acc[i]);
    __asm__ volatile("" : "+x"(w));
  }
  __m256 s = acc[0];
  for (int i = 1; i < kDotChains; ++i) s = _mm256_add_ps(s, acc[i]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, s);
  return lanes[0] + lanes[7];
}

double scalar_loop(int64_t iterations) {
  float acc[kDotChains];
  for (int i = 0; i < kDotChains; ++i) acc[i] = static_cast<float>(i);
  float w = 1.0f;
  const float x = 1e-3f;
  for (int64_t k = 0; k < iterations; ++k) {
    for (int i = 0; i < kDotChains; ++i) acc[i] += w * x;
    __asm__ volatile("" : "+r"(w));
  }
  double s = 0;
  for (float a : acc) s += a;
  return s;
}

}  // namespace

DotInstruction batch_dot_instruction(const CpuKernelConfig& config) {
  const bool bf16 = config.activations != ActivationPrecision::kF32;
  switch (config.isa) {
    case CpuIsa::kAvx512:
      // Batch invariance keeps batches on the row kernels (vdpbf16ps), off the tiles.
      if (config.amx && cpu_features().amx_bf16 && bf16 && !config.batch_invariant)
        return DotInstruction::kAmxBf16;
      // bf16x2 batches run on vdpbf16ps too, two of them per product: their ceiling is half
      // this peak, which is what the ratio against it shows.
      return cpu_features().avx512_bf16 && bf16 ? DotInstruction::kDpbf16Zmm
                                                : DotInstruction::kFmaZmm;
    case CpuIsa::kAvx2:
      return DotInstruction::kFmaYmm;
    case CpuIsa::kScalar:
      break;
  }
  return DotInstruction::kScalarFma;
}

std::string_view dot_instruction_name(DotInstruction d) {
  switch (d) {
    case DotInstruction::kScalarFma:
      return "scalar f32 multiply-add";
    case DotInstruction::kFmaYmm:
      return "vfmadd231ps ymm";
    case DotInstruction::kFmaZmm:
      return "vfmadd231ps zmm";
    case DotInstruction::kDpbf16Zmm:
      return "vdpbf16ps zmm";
    case DotInstruction::kAmxBf16:
      return "tdpbf16ps (AMX)";
  }
  return "?";
}

int dot_instruction_flops(DotInstruction d) {
  switch (d) {
    case DotInstruction::kScalarFma:
      return 2;
    case DotInstruction::kFmaYmm:
      return 16;
    case DotInstruction::kFmaZmm:
      return 32;
    case DotInstruction::kDpbf16Zmm:
      return 64;  // 16 lanes × 2 bf16 products, each a multiply and an add
    case DotInstruction::kAmxBf16:
      return 16 * 16 * 32 * 2;
  }
  return 0;
}

double run_dot_loop(DotInstruction d, int64_t iterations) {
  const CpuFeatures& f = cpu_features();
  switch (d) {
    case DotInstruction::kAmxBf16:
      if (!f.amx_bf16) fail("run_dot_loop: this CPU (or OS) offers no AMX-BF16");
      return amx_loop(iterations);
    case DotInstruction::kDpbf16Zmm:
      if (!f.avx512_bf16) fail("run_dot_loop: this CPU has no AVX512_BF16");
      return dpbf16_loop(iterations);
    case DotInstruction::kFmaZmm:
      if (!f.avx512) fail("run_dot_loop: this CPU has no AVX-512");
      return fma_zmm_loop(iterations);
    case DotInstruction::kFmaYmm:
      if (!f.avx2) fail("run_dot_loop: this CPU has no AVX2");
      return fma_ymm_loop(iterations);
    case DotInstruction::kScalarFma:
      break;
  }
  return scalar_loop(iterations);
}

}  // namespace minimax
