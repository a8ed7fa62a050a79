// The AVX-512 level's vector decoding of KV rows, 16 elements to a __m512: what
// attention_kernels-inl.h's widen_bf16 and widen_fp8 use at MINIMAX_SIMD_LEVEL 2. Included by that
// file only, at that level.
// A fragment, included inside attention_kernels-inl.h's namespace (so
// no includes of its own).
#pragma once

// 16 bf16 values as f32 (a shift into the high half).
MINIMAX_SIMD_INLINE __m512 bf16_to_f32_16(const uint16_t* r) {
  const __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)r));
  return _mm512_castsi512_ps(_mm512_slli_epi32(h, 16));
}

// 16 e4m3fn codes as f32, by the arithmetic widen_fp8 describes.
MINIMAX_SIMD_INLINE __m512 fp8_to_f32_16(const uint8_t* r) {
  const __m512i low7 = _mm512_set1_epi32(0x7F), bias = _mm512_set1_epi32(120 << 23);
  const __m512i c = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i*)r));
  const __m512i em = _mm512_and_si512(c, low7);
  const __m512i sign = _mm512_slli_epi32(_mm512_andnot_si512(low7, c), 24);
  __m512 mag = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_slli_epi32(em, 20), bias));
  mag = _mm512_mask_blend_ps(_mm512_cmplt_epi32_mask(em, _mm512_set1_epi32(8)), mag,
                             _mm512_mul_ps(_mm512_cvtepi32_ps(em), _mm512_set1_ps(0x1p-9f)));
  mag = _mm512_mask_blend_ps(_mm512_cmpeq_epi32_mask(em, low7), mag,
                             _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN()));
  const __m512 v = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(mag), sign));
  return _mm512_mul_ps(v, _mm512_set1_ps(kFp8KvScale));
}
