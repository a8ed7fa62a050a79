// Scalar reference codecs for block-scaled formats: OCP MXFP4 (32 e2m1 elements + one e8m0 scale),
// OCP MXFP8 (32 e4m3fn elements + one e8m0 scale) and NVIDIA NVFP4 (16 e2m1 elements + one e4m3
// scale + a per-tensor f32 global scale).
// Spec: spec/formats.md §1 (MXFP4) and §5 (NVFP4); docs/formats.md (MXFP8).
#pragma once

#include <cstdint>

namespace minimax {

inline constexpr int kMxfp4BlockElems = 32, kMxfp4BlockBytes = 16;
inline constexpr int kNvfp4BlockElems = 16, kNvfp4BlockBytes = 8;
inline constexpr int kMxfp8BlockElems = 32;  // one e4m3fn code per byte

// Packing (both formats): element i of a packed row lives in byte i/2, in the LOW nibble when i
// is even and the high nibble when i is odd (spec §1.4: Quark, vLLM, gpt-oss all agree).

// ---- MXFP4 ----

// out[i] = e2m1(element i) * 2^(scale - 127), computed in float (values past the float range, only
// possible for scale >= 254, become +-inf). Scale 0xFF (e8m0 NaN) makes the whole block NaN.
void mxfp4_decode_block(const uint8_t* packed16, uint8_t scale_e8m0, float* out32);
// Returns the e8m0 scale code X = floor(log2(amax)) - 2 + 127 clamped to [0, 254] (OCP MX v1.0;
// the 2 is e2m1's largest exponent), and packs e2m1(x / 2^(X-127)) rounded to nearest even with
// saturation at +-6 (amax/2^(X-127) lies in [4, 8), so the top of the block can saturate). An
// all-zero block gets X = 127 (scale 1). The sign of zero elements is kept (-0 -> 0x8). Throws on
// a NaN or inf element.
uint8_t mxfp4_encode_block(const float* in32, uint8_t* packed16);
// A row of n elements (n % 32 == 0): n/2 packed bytes and n/32 scale codes. Throws otherwise.
void mxfp4_decode_row(const uint8_t* packed, const uint8_t* scales, int64_t n, float* out);
void mxfp4_encode_row(const float* in, int64_t n, uint8_t* packed, uint8_t* scales);

// ---- MXFP8 (e4m3fn elements, one byte each) ----

// out[i] = e4m3fn(code i) * 2^(scale - 127) for the n elements of a row (n % 32 == 0; element i
// takes scale i / 32), computed exactly in double and rounded once to float. A NaN code or a NaN
// scale (0xFF) gives NaN. Throws when n is not a multiple of 32.
void mxfp8_decode_row(const uint8_t* codes, const uint8_t* scales, int64_t n, float* out);
// Scale code X = ceil(log2(amax / 448)) + 127 clamped to [0, 254], the smallest power of two that
// needs no saturation (vLLM's MXFP8 quantizer after its #53110 fix; OCP's floor rule would clip
// the block maximum to 448); an all-zero block gets X = 127. Elements = e4m3fn(x / 2^(X-127))
// rounded to nearest even (exact division), -0 kept. Throws on NaN or inf elements.
uint8_t mxfp8_encode_block(const float* in32, uint8_t* codes32);
void mxfp8_encode_row(const float* in, int64_t n, uint8_t* codes, uint8_t* scales);

// ---- NVFP4 (ModelOpt) ----

// out[i] = (e2m1(element i) * e4m3fn(scale)) * global_scale in float. The first product is exact,
// so each output is the exact product rounded once. (vLLM's emulation multiplies scale and
// global_scale first; that can differ by one float rounding for elements 1.5, 3 and 6.)
// A NaN scale code (0x7F / 0xFF) gives NaN outputs.
void nvfp4_decode_block(const uint8_t* packed8, uint8_t scale_e4m3, float global_scale,
                        float* out16);
// Block scale code = e4m3fn(amax / 6 / global_scale) rounded to nearest even (f32 arithmetic, as
// ModelOpt computes it; saturating at 448); elements = e2m1(x / (scale * global_scale)) rounded to
// nearest even, saturating at +-6. When the scale rounds to 0 every element encodes as a zero of
// its sign. Returns the scale code. Throws on NaN/inf elements and on a global_scale that is not
// finite and positive.
uint8_t nvfp4_encode_block(const float* in16, float global_scale, uint8_t* packed8);
// ModelOpt's weight_scale_2: tensor_amax / (6 * 448) in f32, 1.0 when tensor_amax == 0. Throws on
// a negative, NaN or inf amax.
float nvfp4_global_scale(float tensor_amax);
// A row of n elements (n % 16 == 0): n/2 packed bytes and n/16 e4m3fn scale codes.
void nvfp4_decode_row(const uint8_t* packed, const uint8_t* scales_e4m3, float global_scale,
                      int64_t n, float* out);
void nvfp4_encode_row(const float* in, int64_t n, float global_scale, uint8_t* packed,
                      uint8_t* scales_e4m3);

}  // namespace minimax
