// Scalar reference codecs for bf16, fp16, FP8, e2m1 and e8m0: every value is computed from the
// code's bit fields, every encoding rounds exactly (to nearest, ties to even) in double.
#include "formats/float_formats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "base/error.h"

namespace minimax {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A sign-less binary floating-point layout: `exponent_bits` exponent field with `bias`, then
// `mantissa_bits` fraction. Field 0 holds the subnormals; special values are the caller's business.
struct MagnitudeLayout {
  int exponent_bits;
  int mantissa_bits;
  int bias;
};

constexpr MagnitudeLayout kF16Layout{5, 10, 15};
constexpr MagnitudeLayout kE2M1Layout{2, 1, 1};

// Exact value of a sign-less code (exponent field above the mantissa field).
double decode_magnitude(uint32_t code, MagnitudeLayout layout) {
  const uint32_t mantissa = code & ((1u << layout.mantissa_bits) - 1);
  const int exponent_field = static_cast<int>(code >> layout.mantissa_bits);
  if (exponent_field == 0) {  // subnormal: 0.m * 2^(1 - bias)
    return std::ldexp(static_cast<double>(mantissa), 1 - layout.bias - layout.mantissa_bits);
  }
  const uint32_t significand = mantissa | (1u << layout.mantissa_bits);  // 1.m
  return std::ldexp(static_cast<double>(significand),
                    exponent_field - layout.bias - layout.mantissa_bits);
}

// Nearest integer to x >= 0 (x < 2^52), ties to even. Written out rather than taken from the
// floating-point environment so that the rounding mode can never change it.
uint64_t round_half_to_even(double x) {
  const double floor_x = std::floor(x);
  const double fraction = x - floor_x;  // exact for x < 2^52
  uint64_t n = static_cast<uint64_t>(floor_x);
  if (fraction > 0.5 || (fraction == 0.5 && (n & 1) != 0)) ++n;
  return n;
}

// Code of the layout value nearest to `magnitude` (finite, >= 0), ties to even. The exponent field
// is not bounded: a result past the layout's largest code means overflow, which the caller handles.
// A rounding carry out of the mantissa moves into the exponent field, as it should.
uint64_t encode_magnitude(double magnitude, MagnitudeLayout layout) {
  if (magnitude == 0) return 0;
  int frexp_exponent = 0;
  std::frexp(magnitude, &frexp_exponent);   // magnitude = f * 2^frexp_exponent, f in [0.5, 1)
  const int exponent = frexp_exponent - 1;  // floor(log2(magnitude))
  const int min_normal_exponent = 1 - layout.bias;
  // Below the normal range the quantum stays that of the smallest binade (subnormals).
  const int binade = std::max(exponent, min_normal_exponent);
  const uint64_t significand =
      round_half_to_even(std::ldexp(magnitude, layout.mantissa_bits - binade));
  // For a normal binade `significand` includes the implicit leading one, which adds the 1 that
  // the biased exponent field (binade - min_normal_exponent + 1) needs.
  return (static_cast<uint64_t>(binade - min_normal_exponent) << layout.mantissa_bits) +
         significand;
}

// ---- FP8 format rules ----

MagnitudeLayout fp8_layout(Fp8Format format) {
  switch (format) {
    case Fp8Format::kE4M3FN:
    case Fp8Format::kE4M3Gaudi2:
      return {4, 3, 7};
    case Fp8Format::kE4M3FNUZ:
      return {4, 3, 8};
    case Fp8Format::kE5M2:
      return {5, 2, 15};
    case Fp8Format::kE5M2FNUZ:
      return {5, 2, 16};
  }
  fail("fp8 format: unknown Fp8Format value {}", static_cast<int>(format));
}

bool is_fnuz(Fp8Format format) {
  return format == Fp8Format::kE4M3FNUZ || format == Fp8Format::kE5M2FNUZ;
}

bool fp8_is_inf(uint8_t code, Fp8Format format) {
  return format == Fp8Format::kE5M2 && (code & 0x7F) == 0x7C;  // S.11111.00
}

uint8_t fp8_nan_code(Fp8Format format) {
  switch (format) {
    case Fp8Format::kE4M3FN:
    case Fp8Format::kE4M3Gaudi2:
      return 0x7F;  // S.1111.111
    case Fp8Format::kE5M2:
      return 0x7E;  // S.11111.10, the IEEE-style quiet NaN
    case Fp8Format::kE4M3FNUZ:
    case Fp8Format::kE5M2FNUZ:
      return 0x80;  // the "negative zero" pattern
  }
  fail("fp8 format: unknown Fp8Format value {}", static_cast<int>(format));
}

// Largest finite magnitude code: the largest code below 0x80 that is neither NaN nor inf.
uint8_t fp8_max_finite_code(Fp8Format format) {
  uint8_t code = 0x7F;
  while (fp8_is_nan(code, format) || fp8_is_inf(code, format)) --code;
  return code;
}

}  // namespace

// ---- bf16 / fp16 ----

float bf16_to_f32(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t f32_to_bf16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x0040);  // set quiet bit
  // bf16 is the top half of f32: add just under half of the dropped part's range, plus one when
  // the kept part is odd, so that exact halves go to the even neighbour. Carries into the exponent
  // are the right answer (up to inf); the sum cannot pass 2^32 for a finite or infinite input.
  bits += 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float f16_to_f32(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits >> 15) << 31;
  const uint32_t exponent_field = (bits >> 10) & 0x1F;
  const uint32_t mantissa = bits & 0x3FF;
  if (exponent_field == 0x1F) {  // inf (mantissa 0) or NaN: same payload in the f32 fraction
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  }
  const float magnitude = static_cast<float>(decode_magnitude(bits & 0x7FFF, kF16Layout));
  return sign != 0 ? -magnitude : magnitude;
}

uint16_t f32_to_f16(float value) {
  const uint32_t f32_bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((f32_bits >> 31) << 15);
  if (std::isnan(value)) {
    return static_cast<uint16_t>(sign | 0x7E00 | ((f32_bits >> 13) & 0x3FF));
  }
  if (std::isinf(value)) return sign | 0x7C00;
  const uint64_t magnitude = encode_magnitude(std::fabs(static_cast<double>(value)), kF16Layout);
  if (magnitude >= 0x7C00) return sign | 0x7C00;  // past 65504 after rounding: overflow to inf
  return static_cast<uint16_t>(sign | magnitude);
}

// ---- FP8 ----

bool fp8_is_nan(uint8_t code, Fp8Format format) {
  const int exponent_field = (code & 0x7F) >> fp8_layout(format).mantissa_bits;
  switch (format) {
    case Fp8Format::kE4M3FN:
      return (code & 0x7F) == 0x7F;  // exponent 1111 and mantissa 111 only
    case Fp8Format::kE4M3Gaudi2:
      return exponent_field == 0xF;  // IEEE-style reserved exponent: outside the 240 window
    case Fp8Format::kE5M2:
      return exponent_field == 0x1F && (code & 0x3) != 0;  // mantissa 00 is inf
    case Fp8Format::kE4M3FNUZ:
    case Fp8Format::kE5M2FNUZ:
      return code == 0x80;
  }
  fail("fp8_is_nan: unknown Fp8Format value {}", static_cast<int>(format));
}

Fp8Limits fp8_limits(Fp8Format format) {
  const MagnitudeLayout layout = fp8_layout(format);
  return Fp8Limits{
      .max_finite = fp8_to_f64(fp8_max_finite_code(format), format),
      .min_normal = fp8_to_f64(static_cast<uint8_t>(1u << layout.mantissa_bits), format),
      .min_subnormal = fp8_to_f64(0x01, format),
  };
}

double fp8_to_f64(uint8_t code, Fp8Format format) {
  if (fp8_is_nan(code, format)) return kNaN;
  const bool negative = (code & 0x80) != 0;
  if (fp8_is_inf(code, format)) {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  const double magnitude = decode_magnitude(code & 0x7F, fp8_layout(format));
  return negative ? -magnitude : magnitude;
}

uint8_t f64_to_fp8(double value, Fp8Format format) {
  if (std::isnan(value)) return fp8_nan_code(format);
  const uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
  if (std::isinf(value) && format == Fp8Format::kE5M2) return sign | 0x7C;
  const uint8_t max_code = fp8_max_finite_code(format);
  const double magnitude = std::min(std::fabs(value), fp8_to_f64(max_code, format));
  const uint64_t code = encode_magnitude(magnitude, fp8_layout(format));
  if (code == 0 && is_fnuz(format)) return 0x00;  // no -0: 0x80 would be NaN
  return static_cast<uint8_t>(sign | code);
}

// ---- e2m1 ----

double e2m1_to_f64(uint8_t nibble) {
  const double magnitude = decode_magnitude(nibble & 0x7, kE2M1Layout);
  return (nibble & 0x8) != 0 ? -magnitude : magnitude;
}

uint8_t f64_to_e2m1(double value) {
  if (std::isnan(value)) fail("f64_to_e2m1: value is NaN, which FP4 e2m1 cannot represent");
  const uint8_t sign = std::signbit(value) ? 0x8 : 0x0;
  const double magnitude = std::min(std::fabs(value), decode_magnitude(0x7, kE2M1Layout));
  return static_cast<uint8_t>(sign | encode_magnitude(magnitude, kE2M1Layout));
}

// ---- e8m0 ----

bool e8m0_is_nan(uint8_t code) { return code == 0xFF; }

double e8m0_to_f64(uint8_t code) {
  if (e8m0_is_nan(code)) return kNaN;
  return std::ldexp(1.0, static_cast<int>(code) - 127);
}

}  // namespace minimax
