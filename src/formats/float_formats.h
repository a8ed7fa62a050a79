// Scalar reference codecs for the small floating-point formats: bf16, fp16, the FP8 family (OCP
// e4m3fn / e5m2, AMD fnuz, the Gaudi 2 e4m3 window), FP4 e2m1 and the e8m0 block scale.
// Exact and simple, not fast: kernels check their fast paths against these (spec/formats.md §1,
// §3).
#pragma once

#include <cstdint>

namespace minimax {

// ---- bf16 / fp16 ----------------------------------------------------------------------------

float bf16_to_f32(uint16_t bits);
// Round to nearest, ties to even; overflow rounds to +-inf; inf stays inf; NaN stays NaN (sign and
// top payload bits kept, quiet bit set).
uint16_t f32_to_bf16(float value);

float f16_to_f32(uint16_t bits);
// IEEE binary16, round to nearest even, overflow -> +-inf, subnormals exact; NaN as f32_to_bf16.
uint16_t f32_to_f16(float value);

// ---- FP8 ------------------------------------------------------------------------------------

enum class Fp8Format {
  kE4M3FN,      // OCP e4m3 "fn": bias 7, max 448, NaN = S.1111.111, no inf, has -0.
  kE4M3Gaudi2,  // e4m3fn bit layout, restricted to |v| <= 240 (Gaudi 2): exponent field 1111 = NaN.
  kE4M3FNUZ,    // AMD e4m3 "fnuz": bias 8, max 240, 0x80 = the only NaN, no -0, no inf.
  kE5M2,        // OCP e5m2: bias 15, max 57344, IEEE-style inf (S.11111.00) and NaN.
  kE5M2FNUZ,    // AMD e5m2 "fnuz": bias 16, max 57344, 0x80 = the only NaN, no -0, no inf.
};

struct Fp8Limits {
  double max_finite;
  double min_normal;
  double min_subnormal;
};

// The format's extremes, computed by decoding its codes.
Fp8Limits fp8_limits(Fp8Format format);
bool fp8_is_nan(uint8_t code, Fp8Format format);
// Exact value of a code: NaN codes -> NaN, e5m2 inf codes -> +-inf. kE4M3Gaudi2 decodes the codes
// whose exponent field is 1111 (0x78..0x7F, 0xF8..0xFF, i.e. |v| > 240 in OCP) to NaN: they lie
// outside the window Gaudi 2 represents, and Gaudi 2's own meaning for them is not confirmed.
double fp8_to_f64(uint8_t code, Fp8Format format);
// Round to nearest even. Finite values beyond max_finite saturate to +-max_finite (clamp-then-cast,
// as compressed-tensors quantizes); +-inf saturates too, except in kE5M2, which keeps +-inf.
// NaN -> the format's NaN code (0x7F for e4m3fn and Gaudi 2, 0x7E for e5m2, 0x80 for fnuz).
// -0.0, and negative values that round to zero, give the -0 code 0x80 where the format has one;
// the fnuz formats have none (0x80 is their NaN) and give 0x00.
uint8_t f64_to_fp8(double value, Fp8Format format);

// ---- FP4 e2m1 (MX / NVFP4 element) -----------------------------------------------------------

// Low 4 bits used: S.EE.M, bias 1, values +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}; 0x8 is -0.
double e2m1_to_f64(uint8_t nibble);
// Round to nearest even on the e2m1 grid, saturating at +-6 (inf too); the sign of zero is kept.
// Throws on NaN (e2m1 has no NaN).
uint8_t f64_to_e2m1(double value);

// ---- e8m0 (MX block scale) ------------------------------------------------------------------

// 2^(code - 127); 0x00 is 2^-127 (not zero); 0xFF is NaN.
double e8m0_to_f64(uint8_t code);
bool e8m0_is_nan(uint8_t code);

}  // namespace minimax
