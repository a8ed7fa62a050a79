// Decoders for validate, each computed from its format's bit fields.
#include "checkpoint/validate_decode.h"

#include <bit>
#include <cmath>
#include <limits>

namespace minimax::validation {

const std::array<double, 16>& e2m1_values() {
  static const std::array<double, 16> table = [] {
    std::array<double, 16> t{};
    for (int code = 0; code < 16; ++code) {
      const double sign = (code & 8) ? -1.0 : 1.0;
      const int exponent_field = (code >> 1) & 3, mantissa = code & 1;
      // bias 1; field 0 is subnormal: 0.m x 2^0
      const double magnitude = exponent_field == 0
                                   ? 0.5 * mantissa
                                   : (1.0 + 0.5 * mantissa) * std::ldexp(1.0, exponent_field - 1);
      t[code] = sign * magnitude;
    }
    return t;
  }();
  return table;
}

const std::array<double, 256>& e4m3fn_values() {
  static const std::array<double, 256> table = [] {
    std::array<double, 256> t{};
    for (int code = 0; code < 256; ++code) {
      const double sign = (code & 0x80) ? -1.0 : 1.0;
      const int exponent_field = (code >> 3) & 15, mantissa = code & 7;
      if (exponent_field == 15 && mantissa == 7) {
        t[code] = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      // bias 7; field 0 is subnormal: m/8 x 2^-6
      const double magnitude = exponent_field == 0
                                   ? mantissa / 8.0 * std::ldexp(1.0, -6)
                                   : (1.0 + mantissa / 8.0) * std::ldexp(1.0, exponent_field - 7);
      t[code] = sign * magnitude;
    }
    return t;
  }();
  return table;
}

void decode_mxfp4_row(const uint8_t* packed, const uint8_t* scales, int64_t cols, double* out) {
  const auto& e2m1 = e2m1_values();
  for (int64_t b = 0; b < cols / 32; ++b) {
    const double scale = scales[b] == 0xFF ? std::numeric_limits<double>::quiet_NaN()
                                           : std::ldexp(1.0, int{scales[b]} - 127);
    for (int i = 0; i < 16; ++i) {
      const uint8_t byte = packed[b * 16 + i];
      out[b * 32 + 2 * i] = e2m1[byte & 0x0F] * scale;
      out[b * 32 + 2 * i + 1] = e2m1[byte >> 4] * scale;
    }
  }
}

double bf16_value(uint16_t bits) {
  return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits) << 16));
}

bool f32_power_of_two(uint32_t bits, int* exponent) {
  const uint32_t sign = bits >> 31, exponent_field = (bits >> 23) & 0xFF,
                 mantissa = bits & 0x7FFFFF;
  if (sign != 0 || mantissa != 0 || exponent_field == 0 || exponent_field == 0xFF) return false;
  *exponent = static_cast<int>(exponent_field) - 127;
  return true;
}

int e4m3fn_exponent(uint8_t code) {
  const int exponent_field = (code >> 3) & 15, mantissa = code & 7;
  if (exponent_field != 0) return exponent_field - 7;
  // subnormal m/8 x 2^-6: floor(log2 m) - 9
  return std::bit_width(static_cast<unsigned>(mantissa)) - 1 - 9;
}

}  // namespace minimax::validation
