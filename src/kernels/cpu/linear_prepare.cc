// The activations of the vdpbf16ps row kernels, prepared with AVX-512 + AVX512_BF16: rounded to
// bf16 (or split into bf16 hi + lo) 32 at a time with vcvtne2ps2bf16, then put in the kernel's
// column order with vpermt2w. Every linear call prepares its x once per token, so at decode this
// is a few thousand activations per call next to a few MB of weight; the scalar loop it replaces
// cost ~10% of a decode step.
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/gcc12_avx512_warnings-inl.h"
#include "kernels/cpu/linear_bf16_split-inl.h"
#include "kernels/cpu/linear_internal.h"

#define MINIMAX_PREPARE __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,bmi2")))
// The f32 activations' permutation needs only AVX-512 F (cpu_features().avx512).
#define MINIMAX_PREPARE_F32 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,bmi2")))

namespace minimax::cpu_linear_detail {
namespace {

// 32 activations from x[0, n) (n <= 32, zero past it) as bf16 hi and (split) lo halves.
struct Halves {
  __m512i hi, lo;
};
MINIMAX_PREPARE inline Halves halves32(const float* x, int n, bool split) {
  const __mmask16 m0 = static_cast<__mmask16>(_bzhi_u32(0xFFFF, n < 16 ? n : 16));
  const __mmask16 m1 = static_cast<__mmask16>(_bzhi_u32(0xFFFF, n > 16 ? n - 16 : 0));
  const __m512 a = _mm512_maskz_loadu_ps(m0, x);
  const __m512 b = _mm512_maskz_loadu_ps(m1, x + 16);
  const __m512i hi = round_bf16_32(a, b);
  return {hi, split ? lo_bf16_32(a, b, hi) : _mm512_setzero_si512()};
}

// out[p] = in[order[p]] for a chunk of `chunk` (32, 64 or 128) words held in in[0 .. chunk/32).
MINIMAX_PREPARE inline void permute_chunk(const __m512i* in, const __m512i* index, int chunk,
                                          uint16_t* out) {
  for (int v = 0; v < chunk / 32; ++v) {
    __m512i r;
    if (chunk == 32) {
      r = _mm512_permutexvar_epi16(index[v], in[0]);
    } else {
      r = _mm512_permutex2var_epi16(in[0], index[v], in[1]);
      if (chunk == 128) {  // index bit 6 picks the upper 64 words
        const __m512i upper = _mm512_permutex2var_epi16(in[2], index[v], in[3]);
        const __mmask32 high =
            _mm512_test_epi16_mask(index[v], _mm512_set1_epi16(static_cast<int16_t>(64)));
        r = _mm512_mask_mov_epi16(r, high, upper);
      }
    }
    _mm512_storeu_si512(out + 32 * v, r);
  }
}

}  // namespace

MINIMAX_PREPARE void prepare_bf16_activations(const RowKernel& k, const float* x, int64_t tokens,
                                              int64_t cols, int64_t stride, uint16_t* out) {
  const int chunk = k.chunk_cols;  // 32, 64 or 128 for every bf16 kernel
  const bool split = k.split_x;
  __m512i index[4];
  for (int v = 0; v < chunk / 32; ++v) {
    alignas(64) uint16_t words[32];
    for (int i = 0; i < 32; ++i)
      words[i] = k.order != nullptr ? k.order[32 * v + i] : static_cast<uint16_t>(32 * v + i);
    index[v] = _mm512_load_si512(words);
  }
  for (int64_t t = 0; t < tokens; ++t) {
    const float* xt = x + t * cols;
    uint16_t* ot = out + t * stride * (split ? 2 : 1);
    for (int64_t c0 = 0; c0 < stride; c0 += chunk) {
      __m512i hi[4], lo[4];
      for (int v = 0; v < chunk / 32; ++v) {
        const int64_t left = cols - (c0 + 32 * v);
        const int n = left <= 0 ? 0 : left >= 32 ? 32 : static_cast<int>(left);
        const Halves h = halves32(xt + (n > 0 ? c0 + 32 * v : 0), n, split);
        hi[v] = h.hi;
        lo[v] = h.lo;
      }
      if (split) {
        permute_chunk(hi, index, chunk, ot + 2 * c0);
        permute_chunk(lo, index, chunk, ot + 2 * c0 + chunk);
      } else {
        permute_chunk(hi, index, chunk, ot + c0);
      }
    }
  }
}

// The f32 kernels' order (even_odd_order, or NVFP4's own): every output vector of 16 picks from
// the chunk's 1, 2, 4 or 8 input vectors with vpermt2ps per pair of them. Against the scalar
// gather it replaces, which on CPUs with AMX (where every row kernel takes f32 activations) cost a
// few microseconds per call: an MoE decode step makes hundreds of calls.
MINIMAX_PREPARE_F32 void prepare_f32_activations(const RowKernel& k, const float* x, int64_t tokens,
                                                 int64_t cols, int64_t stride, float* out) {
  const int chunk = k.chunk_cols;
  const int vectors = chunk / 16;
  __m512i index[8];
  for (int v = 0; v < vectors; ++v) {
    alignas(64) int32_t lanes[16];
    for (int i = 0; i < 16; ++i) lanes[i] = k.order[16 * v + i];
    index[v] = _mm512_load_si512(lanes);
  }
  for (int64_t t = 0; t < tokens; ++t) {
    const float* xt = x + t * cols;
    float* ot = out + t * stride;
    for (int64_t c0 = 0; c0 < stride; c0 += chunk) {
      __m512 in[8];
      for (int v = 0; v < vectors; ++v) {
        const int64_t left = cols - (c0 + 16 * v);
        const unsigned n = left <= 0 ? 0u : left >= 16 ? 16u : static_cast<unsigned>(left);
        in[v] = _mm512_maskz_loadu_ps(static_cast<__mmask16>(_bzhi_u32(0xFFFF, n)),
                                      xt + (n > 0 ? c0 + 16 * v : 0));
      }
      for (int v = 0; v < vectors; ++v) {
        __m512 r;
        if (vectors == 1) {
          r = _mm512_permutexvar_ps(index[v], in[0]);
        } else {
          r = _mm512_permutex2var_ps(in[0], index[v], in[1]);
          const __m512i pair = _mm512_srli_epi32(index[v], 5);  // which pair of inputs
          for (int p = 1; p < vectors / 2; ++p)
            r = _mm512_mask_mov_ps(r, _mm512_cmpeq_epi32_mask(pair, _mm512_set1_epi32(p)),
                                   _mm512_permutex2var_ps(in[2 * p], index[v], in[2 * p + 1]));
        }
        _mm512_storeu_ps(ot + c0 + 16 * v, r);
      }
    }
  }
}

}  // namespace minimax::cpu_linear_detail
