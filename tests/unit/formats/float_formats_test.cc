// Tests of the scalar codecs in formats/float_formats.h against independently computed values,
// the tables of spec/formats.md §1.1, §3 and §8.2, and brute-force nearest-value searches.
#include "formats/float_formats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"

namespace minimax {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- FP8: the facts of spec §3, written independently of the implementation ----

struct Fp8Facts {
  Fp8Format format;
  const char* name;
  int mantissa_bits;
  double min_subnormal;
  double min_normal;
  double max_finite;
  uint8_t max_finite_code;
  bool has_negative_zero;
};

std::vector<Fp8Facts> all_fp8_facts() {
  return {
      {Fp8Format::kE4M3FN, "e4m3fn", 3, 0x1p-9, 0x1p-6, 448, 0x7E, true},
      {Fp8Format::kE4M3Gaudi2, "e4m3_gaudi2", 3, 0x1p-9, 0x1p-6, 240, 0x77, true},
      {Fp8Format::kE4M3FNUZ, "e4m3fnuz", 3, 0x1p-10, 0x1p-7, 240, 0x7F, false},
      {Fp8Format::kE5M2, "e5m2", 2, 0x1p-16, 0x1p-14, 57344, 0x7B, true},
      {Fp8Format::kE5M2FNUZ, "e5m2fnuz", 2, 0x1p-17, 0x1p-15, 57344, 0x7F, false},
  };
}

// Special codes per spec §3's NaN / Inf columns (Gaudi 2: the documented choice, exponent 1111).
bool expected_nan(uint8_t code, Fp8Format format) {
  const uint8_t magnitude = code & 0x7F;
  switch (format) {
    case Fp8Format::kE4M3FN:
      return magnitude == 0x7F;
    case Fp8Format::kE4M3Gaudi2:
      return magnitude >= 0x78;
    case Fp8Format::kE5M2:
      return magnitude >= 0x7D;
    default:
      return code == 0x80;
  }
}

// Value of each magnitude code 0..0x7F by walking up the number line: consecutive codes are
// consecutive values, and the gap below code c is min_subnormal in the subnormal range and the
// first normal binade, doubling with every binade after that. Inf/NaN codes get garbage.
std::vector<double> walked_magnitudes(const Fp8Facts& facts) {
  std::vector<double> values(128, 0.0);
  for (int code = 1; code < 128; ++code) {
    const int binade_below = (code - 1) >> facts.mantissa_bits;
    values[code] =
        values[code - 1] + std::ldexp(facts.min_subnormal, std::max(0, binade_below - 1));
  }
  return values;
}

bool same_double(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

TEST(Fp8, EveryCodeDecodesToItsWalkedValue) {
  for (const Fp8Facts& facts : all_fp8_facts()) {
    const std::vector<double> magnitudes = walked_magnitudes(facts);
    for (int code = 0; code < 256; ++code) {
      const uint8_t c = static_cast<uint8_t>(code);
      SCOPED_TRACE(facts.name + std::string(" code ") + std::to_string(code));
      const double value = fp8_to_f64(c, facts.format);
      EXPECT_EQ(fp8_is_nan(c, facts.format), expected_nan(c, facts.format));
      if (expected_nan(c, facts.format)) {
        EXPECT_TRUE(std::isnan(value));
      } else if (facts.format == Fp8Format::kE5M2 && (c & 0x7F) == 0x7C) {
        EXPECT_EQ(value, (c & 0x80) ? -kInf : kInf);
      } else {
        const double expected = (c & 0x80) ? -magnitudes[c & 0x7F] : magnitudes[c & 0x7F];
        EXPECT_TRUE(same_double(value, expected)) << value << " vs " << expected;
      }
    }
  }
}

TEST(Fp8, LimitsMatchSpecTable) {
  for (const Fp8Facts& facts : all_fp8_facts()) {
    SCOPED_TRACE(facts.name);
    const Fp8Limits limits = fp8_limits(facts.format);
    EXPECT_EQ(limits.max_finite, facts.max_finite);
    EXPECT_EQ(limits.min_normal, facts.min_normal);
    EXPECT_EQ(limits.min_subnormal, facts.min_subnormal);
    EXPECT_EQ(fp8_to_f64(facts.max_finite_code, facts.format), facts.max_finite);
    EXPECT_EQ(fp8_to_f64(static_cast<uint8_t>(1 << facts.mantissa_bits), facts.format),
              facts.min_normal);
    EXPECT_EQ(fp8_to_f64(0x01, facts.format), facts.min_subnormal);
  }
}

TEST(Fp8, EveryNonNanCodeReencodesToItself) {
  for (const Fp8Facts& facts : all_fp8_facts()) {
    for (int code = 0; code < 256; ++code) {
      const uint8_t c = static_cast<uint8_t>(code);
      if (fp8_is_nan(c, facts.format)) continue;
      EXPECT_EQ(f64_to_fp8(fp8_to_f64(c, facts.format), facts.format), c)
          << facts.name << " code " << code;
    }
  }
}

TEST(Fp8, NanEncodesToTheFormatsNanCode) {
  const double nans[] = {std::numeric_limits<double>::quiet_NaN(),
                         -std::numeric_limits<double>::quiet_NaN()};
  for (const Fp8Facts& facts : all_fp8_facts()) {
    for (double nan : nans) EXPECT_TRUE(fp8_is_nan(f64_to_fp8(nan, facts.format), facts.format));
  }
  EXPECT_EQ(f64_to_fp8(NAN, Fp8Format::kE4M3FN), 0x7F);
  EXPECT_EQ(f64_to_fp8(NAN, Fp8Format::kE4M3FNUZ), 0x80);
  EXPECT_EQ(f64_to_fp8(NAN, Fp8Format::kE5M2FNUZ), 0x80);
}

// Halfway between two neighbours goes to the even code; a hair either side goes to the nearer one.
TEST(Fp8, TiesRoundToEvenAndNeighboursToNearest) {
  for (const Fp8Facts& facts : all_fp8_facts()) {
    for (int code = 0; code < facts.max_finite_code; ++code) {
      const double low = fp8_to_f64(static_cast<uint8_t>(code), facts.format);
      const double high = fp8_to_f64(static_cast<uint8_t>(code + 1), facts.format);
      const double middle = (low + high) / 2;  // exact in double
      const int even = (code % 2 == 0) ? code : code + 1;
      SCOPED_TRACE(facts.name + std::string(" between codes ") + std::to_string(code));
      EXPECT_EQ(f64_to_fp8(middle, facts.format), even);
      EXPECT_EQ(f64_to_fp8(std::nextafter(middle, kInf), facts.format), code + 1);
      EXPECT_EQ(f64_to_fp8(std::nextafter(middle, 0.0), facts.format), code);
      const int negative_even = (even == 0 && !facts.has_negative_zero) ? 0 : (even | 0x80);
      EXPECT_EQ(f64_to_fp8(-middle, facts.format), negative_even);
      EXPECT_EQ(f64_to_fp8(-std::nextafter(middle, kInf), facts.format), (code + 1) | 0x80);
    }
  }
}

// Independent encoder: scan every finite code for the nearest value (ties: even magnitude code).
uint8_t nearest_fp8_by_search(double value, const Fp8Facts& facts) {
  const double magnitude = std::min(std::fabs(value), facts.max_finite);
  int best = 0;
  for (int code = 1; code <= facts.max_finite_code; ++code) {
    const double distance =
        std::fabs(fp8_to_f64(static_cast<uint8_t>(code), facts.format) - magnitude);
    const double best_distance =
        std::fabs(fp8_to_f64(static_cast<uint8_t>(best), facts.format) - magnitude);
    if (distance < best_distance || (distance == best_distance && code % 2 == 0)) best = code;
  }
  if (std::signbit(value) && (best != 0 || facts.has_negative_zero)) best |= 0x80;
  return static_cast<uint8_t>(best);
}

TEST(Fp8, RandomValuesEncodeToTheNearestCode) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> log2_range(-22.0, 18.0);
  std::uniform_real_distribution<double> sign(-1.0, 1.0);
  for (const Fp8Facts& facts : all_fp8_facts()) {
    for (int i = 0; i < 20000; ++i) {
      const double value = std::copysign(std::exp2(log2_range(rng)), sign(rng));
      ASSERT_EQ(f64_to_fp8(value, facts.format), nearest_fp8_by_search(value, facts))
          << facts.name << " value " << value;
    }
  }
}

TEST(Fp8, OutOfRangeValuesSaturate) {
  for (const Fp8Facts& facts : all_fp8_facts()) {
    const uint8_t max_code = facts.max_finite_code;
    for (double big : {facts.max_finite * 1.0001, facts.max_finite * 1.25, 1e30, 1.7e308}) {
      EXPECT_EQ(f64_to_fp8(big, facts.format), max_code) << facts.name << " " << big;
      EXPECT_EQ(f64_to_fp8(-big, facts.format), max_code | 0x80) << facts.name << " " << big;
    }
    const uint8_t inf_code = facts.format == Fp8Format::kE5M2 ? 0x7C : max_code;
    EXPECT_EQ(f64_to_fp8(kInf, facts.format), inf_code) << facts.name;
    EXPECT_EQ(f64_to_fp8(-kInf, facts.format), inf_code | 0x80) << facts.name;
  }
  // 464 is where OCP e4m3's rounding would tie 448 with the next (NaN) code: clamp first.
  EXPECT_EQ(f64_to_fp8(464.0, Fp8Format::kE4M3FN), 0x7E);
  EXPECT_EQ(f64_to_fp8(300.0, Fp8Format::kE4M3Gaudi2), 0x77);  // 256 exists in OCP, not here
}

TEST(Fp8, NegativeZero) {
  for (const Fp8Facts& facts : all_fp8_facts()) {
    SCOPED_TRACE(facts.name);
    const uint8_t negative_zero = facts.has_negative_zero ? 0x80 : 0x00;
    EXPECT_EQ(f64_to_fp8(-0.0, facts.format), negative_zero);
    EXPECT_EQ(f64_to_fp8(0.0, facts.format), 0x00);
    EXPECT_EQ(f64_to_fp8(-1e-30, facts.format), negative_zero);  // rounds to a zero
    EXPECT_EQ(f64_to_fp8(-facts.min_subnormal / 2, facts.format), negative_zero);  // tie -> 0
    EXPECT_FALSE(std::signbit(fp8_to_f64(0x00, facts.format)));
    if (facts.has_negative_zero) {
      const double value = fp8_to_f64(0x80, facts.format);
      EXPECT_EQ(value, 0.0);
      EXPECT_TRUE(std::signbit(value));
    } else {
      EXPECT_TRUE(fp8_is_nan(0x80, facts.format));
    }
  }
}

TEST(Fp8, SpecVectors82) {
  const Fp8Format fn = Fp8Format::kE4M3FN;
  const std::pair<uint8_t, double> e4m3fn[] = {
      {0x00, 0.0},   {0x01, 0x1p-9}, {0x04, 0x1p-7}, {0x07, 0.013671875}, {0x08, 0.015625},
      {0x28, 0.25},  {0x30, 0.5},    {0x38, 1.0},    {0x3C, 1.5},         {0x40, 2.0},
      {0x44, 3.0},   {0x48, 4.0},    {0x4C, 6.0},    {0xB8, -1.0},        {0x77, 240.0},
      {0x78, 256.0}, {0x7C, 384.0},  {0x7E, 448.0}};
  for (auto [code, value] : e4m3fn) {
    EXPECT_EQ(fp8_to_f64(code, fn), value) << int(code);
    EXPECT_EQ(f64_to_fp8(value, fn), code) << value;
  }
  EXPECT_TRUE(std::signbit(fp8_to_f64(0x80, fn)) && fp8_to_f64(0x80, fn) == 0.0);
  EXPECT_TRUE(std::isnan(fp8_to_f64(0x7F, fn)) && std::isnan(fp8_to_f64(0xFF, fn)));

  const Fp8Format fnuz = Fp8Format::kE4M3FNUZ;
  EXPECT_EQ(fp8_to_f64(0x08, fnuz), 0x1p-7);
  EXPECT_EQ(fp8_to_f64(0x01, fnuz), 0x1p-10);
  EXPECT_EQ(fp8_to_f64(0x38, fnuz), 0.5);
  EXPECT_EQ(fp8_to_f64(0x40, fnuz), 1.0);
  EXPECT_EQ(fp8_to_f64(0x7F, fnuz), 240.0);
  EXPECT_TRUE(std::isnan(fp8_to_f64(0x80, fnuz)));

  const Fp8Format e5m2 = Fp8Format::kE5M2;
  EXPECT_EQ(fp8_to_f64(0x3C, e5m2), 1.0);
  EXPECT_EQ(fp8_to_f64(0x04, e5m2), 0x1p-14);
  EXPECT_EQ(fp8_to_f64(0x01, e5m2), 0x1p-16);
  EXPECT_EQ(fp8_to_f64(0x7B, e5m2), 57344.0);
  EXPECT_EQ(fp8_to_f64(0x7C, e5m2), kInf);
  EXPECT_EQ(fp8_to_f64(0xFC, e5m2), -kInf);
  for (uint8_t code : {0x7D, 0x7E, 0x7F}) EXPECT_TRUE(std::isnan(fp8_to_f64(code, e5m2)));

  // E2M1 -> E4M3 at unit scale.
  const std::pair<double, uint8_t> e2m1_in_e4m3[] = {{0.5, 0x30}, {1, 0x38}, {1.5, 0x3C}, {2, 0x40},
                                                     {3, 0x44},   {4, 0x48}, {6, 0x4C}};
  for (auto [value, code] : e2m1_in_e4m3) {
    EXPECT_EQ(f64_to_fp8(value, fn), code);
    EXPECT_EQ(f64_to_fp8(-value, fn), code | 0x80);
  }
}

TEST(Fp8, Gaudi2IsOcpE4m3WithinItsWindow) {
  for (int code = 0; code < 256; ++code) {
    const uint8_t c = static_cast<uint8_t>(code);
    const double ocp = fp8_to_f64(c, Fp8Format::kE4M3FN);
    if (std::fabs(ocp) <= 240) {
      EXPECT_TRUE(same_double(fp8_to_f64(c, Fp8Format::kE4M3Gaudi2), ocp)) << code;
    } else {
      EXPECT_TRUE(fp8_is_nan(c, Fp8Format::kE4M3Gaudi2)) << code;
    }
  }
}

// Same bits, fnuz value = fn value / 2 (spec §3), except 0x80 and the fn NaNs.
TEST(Fp8, FnuzIsHalfOfFn) {
  for (int code = 0; code < 256; ++code) {
    const uint8_t c = static_cast<uint8_t>(code);
    if (c == 0x80) continue;
    if (!fp8_is_nan(c, Fp8Format::kE4M3FN)) {
      EXPECT_EQ(fp8_to_f64(c, Fp8Format::kE4M3FNUZ), fp8_to_f64(c, Fp8Format::kE4M3FN) / 2);
    }
    if ((c & 0x7F) < 0x7C) {
      EXPECT_EQ(fp8_to_f64(c, Fp8Format::kE5M2FNUZ), fp8_to_f64(c, Fp8Format::kE5M2) / 2);
    }
  }
}

// ---- e2m1 ----

TEST(E2m1, AllSixteenCodesMatchSpecTable) {
  const double table[16] = {0.0,  0.5,  1.0,  1.5,  2.0,  3.0,  4.0,  6.0,
                            -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0};
  for (int code = 0; code < 16; ++code) {
    EXPECT_TRUE(same_double(e2m1_to_f64(static_cast<uint8_t>(code)), table[code])) << code;
    EXPECT_TRUE(same_double(e2m1_to_f64(static_cast<uint8_t>(code | 0xF0)), table[code]))
        << "high bits must be ignored, code " << code;
    EXPECT_EQ(f64_to_e2m1(table[code]), code);
  }
}

TEST(E2m1, TiesRoundToEven) {
  // Each midpoint between neighbouring codes, the code below and the code above it.
  const struct {
    double middle;
    uint8_t low, high;
  } ties[] = {{0.25, 0x0, 0x1}, {0.75, 0x1, 0x2}, {1.25, 0x2, 0x3}, {1.75, 0x3, 0x4},
              {2.5, 0x4, 0x5},  {3.5, 0x5, 0x6},  {5.0, 0x6, 0x7}};
  for (const auto& tie : ties) {
    const uint8_t even = (tie.low % 2 == 0) ? tie.low : tie.high;
    EXPECT_EQ(f64_to_e2m1(tie.middle), even) << tie.middle;
    EXPECT_EQ(f64_to_e2m1(-tie.middle), even | 0x8) << tie.middle;
    EXPECT_EQ(f64_to_e2m1(std::nextafter(tie.middle, kInf)), tie.high) << tie.middle;
    EXPECT_EQ(f64_to_e2m1(std::nextafter(tie.middle, 0.0)), tie.low) << tie.middle;
  }
}

// Independent encoder: nearest of the 8 magnitudes (ties: even code), saturating, sign kept.
uint8_t nearest_e2m1_by_search(double value) {
  const double magnitude = std::min(std::fabs(value), 6.0);
  int best = 0;
  for (int code = 1; code < 8; ++code) {
    const double distance = std::fabs(e2m1_to_f64(static_cast<uint8_t>(code)) - magnitude);
    const double best_distance = std::fabs(e2m1_to_f64(static_cast<uint8_t>(best)) - magnitude);
    if (distance < best_distance || (distance == best_distance && code % 2 == 0)) best = code;
  }
  return static_cast<uint8_t>(best | (std::signbit(value) ? 0x8 : 0));
}

TEST(E2m1, RandomValuesEncodeToTheNearestCode) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> uniform(-8.0, 8.0);
  for (int i = 0; i < 50000; ++i) {
    const double value = uniform(rng);
    ASSERT_EQ(f64_to_e2m1(value), nearest_e2m1_by_search(value)) << value;
  }
  for (int quarter = -32; quarter <= 32; ++quarter) {  // every multiple of 1/4, ties included
    ASSERT_EQ(f64_to_e2m1(quarter / 4.0), nearest_e2m1_by_search(quarter / 4.0)) << quarter;
  }
}

TEST(E2m1, SaturationZeroAndNan) {
  for (double big : {6.0001, 7.0, 8.0, 1e300, kInf}) {
    EXPECT_EQ(f64_to_e2m1(big), 0x7) << big;
    EXPECT_EQ(f64_to_e2m1(-big), 0xF) << big;
  }
  EXPECT_EQ(f64_to_e2m1(0.0), 0x0);
  EXPECT_EQ(f64_to_e2m1(-0.0), 0x8);
  EXPECT_EQ(f64_to_e2m1(-0.1), 0x8);
  EXPECT_TRUE(std::signbit(e2m1_to_f64(0x8)));
  EXPECT_THROW(f64_to_e2m1(std::numeric_limits<double>::quiet_NaN()), Error);
}

// ---- e8m0 ----

TEST(E8m0, ExtremesAndEveryPowerOfTwo) {
  EXPECT_EQ(e8m0_to_f64(0x7F), 1.0);
  EXPECT_EQ(e8m0_to_f64(0x00), 0x1p-127);
  EXPECT_NE(e8m0_to_f64(0x00), 0.0);
  EXPECT_EQ(e8m0_to_f64(0xFE), 0x1p127);
  EXPECT_TRUE(std::isnan(e8m0_to_f64(0xFF)));
  double expected = 1.0;  // walk down and up from 2^0 by halving / doubling
  for (int code = 127; code >= 0; --code, expected /= 2) EXPECT_EQ(e8m0_to_f64(code), expected);
  expected = 1.0;
  for (int code = 127; code <= 254; ++code, expected *= 2) EXPECT_EQ(e8m0_to_f64(code), expected);
  for (int code = 0; code < 256; ++code) EXPECT_EQ(e8m0_is_nan(code), code == 0xFF) << code;
}

// ---- bf16 / fp16 ----

bool same_float(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

// Value of a 16-bit code from its fields by the textbook formula, in double.
double formula_value(uint16_t code, int mantissa_bits, int bias) {
  const int exponent_field = (code & 0x7FFF) >> mantissa_bits;
  const double mantissa = code & ((1 << mantissa_bits) - 1);
  const double fraction = mantissa / std::pow(2.0, mantissa_bits);
  const double magnitude = exponent_field == 0
                               ? fraction * std::pow(2.0, 1 - bias)
                               : (1.0 + fraction) * std::pow(2.0, exponent_field - bias);
  return (code & 0x8000) ? -magnitude : magnitude;
}

TEST(Bf16, AllCodesDecodeAndRoundTrip) {
  for (int code = 0; code < 65536; ++code) {
    const uint16_t c = static_cast<uint16_t>(code);
    const float value = bf16_to_f32(c);
    const bool special = ((c >> 7) & 0xFF) == 0xFF;
    if (special && (c & 0x7F) != 0) {  // NaN: stays NaN of the same sign, quiet ones unchanged
      ASSERT_TRUE(std::isnan(value)) << code;
      const uint16_t back = f32_to_bf16(value);
      ASSERT_TRUE(std::isnan(bf16_to_f32(back)) && (back & 0x8000) == (c & 0x8000)) << code;
      if (c & 0x40) {
        ASSERT_EQ(back, c) << code;  // quiet NaNs keep their payload
      }
      continue;
    }
    if (special) {
      ASSERT_EQ(value, (c & 0x8000) ? -INFINITY : INFINITY) << code;
    } else {
      ASSERT_EQ(static_cast<double>(value), formula_value(c, 7, 127)) << code;
    }
    ASSERT_TRUE(same_float(value, bf16_to_f32(c)));
    ASSERT_EQ(f32_to_bf16(value), c) << code;
  }
}

// Independent bf16 encoder: the two bf16 neighbours of x (truncated code and the next one),
// compared by exact distance in double, ties to the even code.
uint16_t nearest_bf16_by_search(float x) {
  const uint16_t low = static_cast<uint16_t>(std::bit_cast<uint32_t>(x) >> 16);
  const uint16_t high = static_cast<uint16_t>(low + 1);
  const double low_value = std::fabs(static_cast<double>(bf16_to_f32(low)));
  const double high_value = ((high & 0x7FFF) == 0x7F80)
                                ? 0x1p128  // past the top: inf
                                : std::fabs(static_cast<double>(bf16_to_f32(high)));
  const double magnitude = std::fabs(static_cast<double>(x));
  const double low_distance = magnitude - low_value, high_distance = high_value - magnitude;
  if (low_distance < high_distance) return low;
  if (high_distance < low_distance) return high;
  return (low % 2 == 0) ? low : high;
}

TEST(Bf16, RandomFloatsRoundToNearestEven) {
  std::mt19937 rng(99);
  for (int i = 0; i < 1000000; ++i) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isnan(x) || std::isinf(x)) continue;
    ASSERT_EQ(f32_to_bf16(x), nearest_bf16_by_search(x)) << x;
  }
}

TEST(Bf16, TiesSaturationAndZeros) {
  for (uint16_t code = 0; code < 0x7F80; ++code) {  // every pair of positive neighbours
    const double low = bf16_to_f32(code);
    const double high =
        (code + 1 == 0x7F80) ? 0x1p128 : bf16_to_f32(static_cast<uint16_t>(code + 1));
    const float middle = static_cast<float>((low + high) / 2);  // exact: bf16 has 8 bits, f32 24
    ASSERT_EQ(static_cast<double>(middle), (low + high) / 2);
    const uint16_t even = (code % 2 == 0) ? code : static_cast<uint16_t>(code + 1);
    ASSERT_EQ(f32_to_bf16(middle), even) << code;
    ASSERT_EQ(f32_to_bf16(-middle), even | 0x8000) << code;
    ASSERT_EQ(f32_to_bf16(std::nextafter(middle, INFINITY)), code + 1) << code;
    ASSERT_EQ(f32_to_bf16(std::nextafter(middle, 0.0f)), code) << code;
  }
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // rounds up to inf
  EXPECT_EQ(f32_to_bf16(INFINITY), 0x7F80);
  EXPECT_EQ(f32_to_bf16(-INFINITY), 0xFF80);
  EXPECT_EQ(f32_to_bf16(-0.0f), 0x8000);
  EXPECT_TRUE(std::signbit(bf16_to_f32(0x8000)));
  EXPECT_EQ(f32_to_bf16(-std::numeric_limits<float>::denorm_min()), 0x8000);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(NAN))));
  // A NaN whose payload sits only in the bits bf16 drops must not turn into inf.
  const float low_payload_nan = std::bit_cast<float>(0xFF800001u);
  EXPECT_EQ(f32_to_bf16(low_payload_nan), 0xFFC0);
}

TEST(F16, AllCodesDecodeAndRoundTrip) {
  for (int code = 0; code < 65536; ++code) {
    const uint16_t c = static_cast<uint16_t>(code);
    const float value = f16_to_f32(c);
#if defined(__FLT16_MAX__)  // the compiler's own binary16 type as an independent reference
    ASSERT_TRUE(std::isnan(value)
                    ? std::isnan(static_cast<float>(std::bit_cast<_Float16>(c)))
                    : same_float(value, static_cast<float>(std::bit_cast<_Float16>(c))))
        << code;
#endif
    const bool special = ((c >> 10) & 0x1F) == 0x1F;
    if (special && (c & 0x3FF) != 0) {
      ASSERT_TRUE(std::isnan(value)) << code;
      const uint16_t back = f32_to_f16(value);
      ASSERT_TRUE(std::isnan(f16_to_f32(back)) && (back & 0x8000) == (c & 0x8000)) << code;
      if (c & 0x200) {
        ASSERT_EQ(back, c) << code;  // quiet NaNs keep their payload
      }
      continue;
    }
    if (special) {
      ASSERT_EQ(value, (c & 0x8000) ? -INFINITY : INFINITY) << code;
    } else {
      ASSERT_EQ(static_cast<double>(value), formula_value(c, 10, 15)) << code;
    }
    ASSERT_EQ(f32_to_f16(value), c) << code;
  }
}

TEST(F16, TiesOverflowAndZeros) {
  for (uint16_t code = 0; code < 0x7C00; ++code) {
    const double low = f16_to_f32(code);
    const double high =
        (code + 1 == 0x7C00) ? 65536.0 : f16_to_f32(static_cast<uint16_t>(code + 1));
    const float middle = static_cast<float>((low + high) / 2);
    ASSERT_EQ(static_cast<double>(middle), (low + high) / 2);
    const uint16_t even = (code % 2 == 0) ? code : static_cast<uint16_t>(code + 1);
    ASSERT_EQ(f32_to_f16(middle), even) << code;
    ASSERT_EQ(f32_to_f16(-middle), even | 0x8000) << code;
    ASSERT_EQ(f32_to_f16(std::nextafter(middle, INFINITY)), code + 1) << code;
    ASSERT_EQ(f32_to_f16(std::nextafter(middle, 0.0f)), code) << code;
  }
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7BFF);
  EXPECT_EQ(f32_to_f16(65519.99f), 0x7BFF);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7C00);  // the tie above the maximum goes to inf
  EXPECT_EQ(f32_to_f16(1e10f), 0x7C00);
  EXPECT_EQ(f32_to_f16(-1e10f), 0xFC00);
  EXPECT_EQ(f32_to_f16(0x1p-24f), 0x0001);  // smallest subnormal, exact
  EXPECT_EQ(f32_to_f16(0x1p-25f), 0x0000);  // tie with zero goes to zero
  EXPECT_EQ(f32_to_f16(0x1.000002p-25f), 0x0001);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(-1e-30f), 0x8000);
  EXPECT_TRUE(std::signbit(f16_to_f32(0x8000)));
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(NAN))));
  const float low_payload_nan = std::bit_cast<float>(0x7F800001u);
  EXPECT_EQ(f32_to_f16(low_payload_nan), 0x7E00);
}

#if defined(__FLT16_MAX__)
TEST(F16, RandomFloatsMatchTheCompilersConversion) {
  std::mt19937 rng(2024);
  for (int i = 0; i < 1000000; ++i) {
    // Exponents around the binary16 range, so that subnormals and overflow are both hit.
    const uint32_t bits = (rng() & 0x807FFFFFu) | ((100u + rng() % 60u) << 23);
    const float x = std::bit_cast<float>(bits);
    ASSERT_EQ(f32_to_f16(x), std::bit_cast<uint16_t>(static_cast<_Float16>(x))) << x;
  }
}
#endif

}  // namespace
}  // namespace minimax
