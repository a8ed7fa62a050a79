// Exact MXFP4 -> FP8 / BF16 row re-encoding: exponent scan, scale choice, table-driven encoders and
// the float64 verification built on the reference codecs.
#include "checkpoint/mxfp4_to_fp8_exact.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/error.h"
#include "formats/float_formats.h"

namespace minimax {
namespace {

static_assert(std::endian::native == std::endian::little, "the encoders write little-endian pairs");

// An e2m1 magnitude code m (1..7) is M * 2^k with M in {1, 1.5}: 0.5, 1, 1.5, 2, 3, 4, 6.
constexpr std::array<int, 8> kMagnitudeExponent = {0, -1, 0, 0, 1, 1, 2, 2};
constexpr std::array<bool, 8> kMagnitudeHalf = {false, false, false, true,
                                                false, true,  false, true};

// Largest magnitude code and smallest nonzero magnitude code (8 = none) of the 32 nibbles of a
// block: magnitude codes are ordered like the values, so they give the block's exponent extremes.
void block_extremes(const uint8_t* bytes, int* max_code, int* min_nonzero_code) {
#if defined(__SSE2__)
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes));
  const __m128i seven = _mm_set1_epi8(7), eight = _mm_set1_epi8(8), zero = _mm_setzero_si128();
  const __m128i lo = _mm_and_si128(v, seven);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), seven);
  __m128i top = _mm_max_epu8(lo, hi);
  // Zero magnitudes become 8 so that they never win the minimum.
  __m128i bottom = _mm_min_epu8(_mm_or_si128(lo, _mm_and_si128(_mm_cmpeq_epi8(lo, zero), eight)),
                                _mm_or_si128(hi, _mm_and_si128(_mm_cmpeq_epi8(hi, zero), eight)));
  // Horizontal maximum / minimum over the 16 lanes.
  top = _mm_max_epu8(top, _mm_srli_si128(top, 8));
  top = _mm_max_epu8(top, _mm_srli_si128(top, 4));
  top = _mm_max_epu8(top, _mm_srli_si128(top, 2));
  top = _mm_max_epu8(top, _mm_srli_si128(top, 1));
  bottom = _mm_min_epu8(bottom, _mm_srli_si128(bottom, 8));
  bottom = _mm_min_epu8(bottom, _mm_srli_si128(bottom, 4));
  bottom = _mm_min_epu8(bottom, _mm_srli_si128(bottom, 2));
  bottom = _mm_min_epu8(bottom, _mm_srli_si128(bottom, 1));
  *max_code = _mm_cvtsi128_si32(top) & 0xFF;
  *min_nonzero_code = _mm_cvtsi128_si32(bottom) & 0xFF;
#else
  int top = 0, bottom = 8;
  for (int i = 0; i < 16; ++i) {
    for (int magnitude : {bytes[i] & 7, (bytes[i] >> 4) & 7}) {
      top = std::max(top, magnitude);
      if (magnitude != 0) bottom = std::min(bottom, magnitude);
    }
  }
  *max_code = top;
  *min_nonzero_code = bottom;
#endif
}

// FP8 e4m3fn code of nibble `code` when the element exponent is shifted by `shift`
// (e = k + shift); 0x7F (NaN) when the result is not an e4m3 normal.
uint8_t fp8_code(int code, int shift) {
  const int magnitude = code & 7;
  if (magnitude == 0) return 0x00;  // +0 and -0 both become +0
  const int e = kMagnitudeExponent[magnitude] + shift;
  if (e < -6 || e > 8) return 0x7F;
  const int sign = (code & 8) != 0 ? 0x80 : 0x00;
  return static_cast<uint8_t>(sign | (e + 7) << 3 | (kMagnitudeHalf[magnitude] ? 4 : 0));
}

// For every shift d that can put a nonzero element on an e4m3 normal (e = k + d in [-6, 8] with
// k in [-1, 2]), the pair of FP8 codes each packed byte becomes, low element in the low byte.
constexpr int kMinShift = -8, kMaxShift = 9;
struct Fp8PairTables {
  std::array<std::array<uint16_t, 256>, kMaxShift - kMinShift + 2> pairs{};  // last: zeros only
  Fp8PairTables() {
    for (int d = kMinShift; d <= kMaxShift + 1; ++d) {
      const int shift = d <= kMaxShift ? d : 1000;  // out of range: nonzero codes -> NaN
      for (int b = 0; b < 256; ++b)
        pairs[d - kMinShift][b] =
            static_cast<uint16_t>(fp8_code(b & 15, shift) | fp8_code(b >> 4, shift) << 8);
    }
  }
  const std::array<uint16_t, 256>& for_shift(int d) const {
    if (d < kMinShift || d > kMaxShift) return pairs.back();
    return pairs[d - kMinShift];
  }
};
const Fp8PairTables& fp8_pair_tables() {
  static const Fp8PairTables table;
  return table;
}

// BF16 bits of nibble `code` times 2^shift, built from the bit fields; NaN past bf16's range.
uint16_t bf16_bits(int code, int shift) {
  const int magnitude = code & 7;
  if (magnitude == 0) return 0x0000;
  const int e = kMagnitudeExponent[magnitude] + shift;
  if (e > 127) return 0x7FC0;
  const uint16_t sign = (code & 8) != 0 ? 0x8000 : 0x0000;
  const bool half = kMagnitudeHalf[magnitude];
  if (e >= -126) return static_cast<uint16_t>(sign | (e + 127) << 7 | (half ? 0x40 : 0));
  // Subnormal: value = m * 2^-133 with m = M * 2^(e + 133), an integer when e >= -133 (M = 1)
  // or e >= -132 (M = 1.5). MXFP4 elements never go below 2^-128, so this always holds.
  if (e < -133 || (e == -133 && half)) return 0x7FC0;
  const int m = half ? 3 << (e + 132) : 1 << (e + 133);
  return static_cast<uint16_t>(sign | m);
}

// Reference decoders for verification, from formats/float_formats.h.
struct VerifyTables {
  std::array<double, 16> e2m1{};
  std::array<double, 256> fp8{};
  VerifyTables() {
    for (int c = 0; c < 16; ++c) e2m1[c] = e2m1_to_f64(static_cast<uint8_t>(c));
    for (int c = 0; c < 256; ++c) fp8[c] = fp8_to_f64(static_cast<uint8_t>(c), Fp8Format::kE4M3FN);
  }
};
const VerifyTables& verify_tables() {
  static const VerifyTables table;
  return table;
}

int nibble(const uint8_t* packed, int64_t col) {
  const uint8_t byte = packed[col / 2];
  return (col & 1) == 0 ? byte & 15 : byte >> 4;
}

}  // namespace

std::string_view fp8_target_name(Fp8Target target) {
  return target == Fp8Target::kOcp ? "ocp" : "gaudi2";
}

Fp8Target parse_fp8_target(const std::string& text, std::string_view option) {
  if (text == "ocp") return Fp8Target::kOcp;
  if (text == "gaudi2") return Fp8Target::kGaudi2;
  fail("{}: unknown target '{}' (expected ocp or gaudi2)", option, text);
}

Fp8Window fp8_window(Fp8Target target) {
  return target == Fp8Target::kOcp ? Fp8Window{-5, 8} : Fp8Window{-6, 7};
}

Mxfp4RowRange scan_mxfp4_row(const uint8_t* packed, const uint8_t* scales, int64_t cols) {
  Mxfp4RowRange range;
  const int64_t blocks = cols / 32;
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t x = scales[b];
    if (x == 0xFF) {
      range.nan_block = b;
      return range;
    }
    int max_code, min_code;
    block_extremes(packed + b * 16, &max_code, &min_code);
    if (max_code == 0) continue;  // all-zero block: no constraint
    const int hi = kMagnitudeExponent[max_code] + x - 127;
    const int lo = kMagnitudeExponent[min_code] + x - 127;
    if (!range.any_nonzero || hi > range.max_exponent) {
      range.max_exponent = hi;
      range.max_block = b;
    }
    if (!range.any_nonzero || lo < range.min_exponent) {
      range.min_exponent = lo;
      range.min_block = b;
    }
    range.any_nonzero = true;
  }
  return range;
}

std::optional<int> choose_row_scale(const Mxfp4RowRange& range, Fp8Target target) {
  if (!range.any_nonzero) return 0;
  const Fp8Window window = fp8_window(target);
  const int s = range.max_exponent - window.max_exponent;
  if (range.min_exponent - s < window.min_exponent) return std::nullopt;
  if (s < kMinScaleExponent) return std::nullopt;
  return s;
}

std::string describe_unrepresentable_row(const Mxfp4RowRange& range, Fp8Target target) {
  const Fp8Window window = fp8_window(target);
  const int span = range.max_exponent - range.min_exponent;
  const std::string found =
      fmt::format("nonzero elements span 2^{} (block {}) to 2^{} (block {}), {} binades",
                  range.min_exponent, range.min_block, range.max_exponent, range.max_block, span);
  const int s = range.max_exponent - window.max_exponent;
  if (s < kMinScaleExponent) {
    return fmt::format("{}; its scale 2^{} would be below 2^{} (not a normal float)", found, s,
                       kMinScaleExponent);
  }
  return fmt::format(
      "{}; --target {} holds at most {} binades under one power-of-two scale per row (e4m3 "
      "exponents [{}, {}])",
      found, fp8_target_name(target), window.max_exponent - window.min_exponent,
      window.min_exponent, window.max_exponent);
}

void encode_row_fp8(const uint8_t* packed, const uint8_t* scales, int64_t cols, int scale_exponent,
                    uint8_t* out) {
  const Fp8PairTables& tables = fp8_pair_tables();
  const int64_t blocks = cols / 32;
  for (int64_t b = 0; b < blocks; ++b) {
    const std::array<uint16_t, 256>& pairs = tables.for_shift(scales[b] - 127 - scale_exponent);
    const uint8_t* in = packed + b * 16;
    uint16_t pair_out[16];
    for (int i = 0; i < 16; ++i) pair_out[i] = pairs[in[i]];
    std::memcpy(out + b * 32, pair_out, 32);
  }
}

bool row_fits_bf16(const Mxfp4RowRange& range) {
  return range.nan_block < 0 && (!range.any_nonzero || range.max_exponent <= 127);
}

void encode_row_bf16(const uint8_t* packed, const uint8_t* scales, int64_t cols, uint8_t* out) {
  const int64_t blocks = cols / 32;
  for (int64_t b = 0; b < blocks; ++b) {
    uint16_t lut[16];
    for (int c = 0; c < 16; ++c) lut[c] = bf16_bits(c, scales[b] - 127);
    const uint8_t* in = packed + b * 16;
    uint16_t values[32];
    for (int i = 0; i < 16; ++i) {
      values[2 * i] = lut[in[i] & 15];
      values[2 * i + 1] = lut[in[i] >> 4];
    }
    std::memcpy(out + b * 64, values, 64);
  }
}

int64_t first_fp8_mismatch(const uint8_t* packed, const uint8_t* scales, int64_t cols,
                           int scale_exponent, const uint8_t* fp8) {
  const VerifyTables& t = verify_tables();
  // Float64 value of every FP8 code times this row's scale; the -0 code is refused outright
  // (NaN never compares equal).
  double converted[256];
  const double row_scale = std::ldexp(1.0, scale_exponent);
  for (int c = 0; c < 256; ++c) converted[c] = t.fp8[c] * row_scale;
  converted[0x80] = std::numeric_limits<double>::quiet_NaN();
  for (int64_t b = 0; b < cols / 32; ++b) {
    // Float64 value of every e2m1 code in this block; a NaN scale (0xFF) makes all of them NaN.
    double source[16];
    const double block_scale = scales[b] == 0xFF ? std::numeric_limits<double>::quiet_NaN()
                                                 : std::ldexp(1.0, scales[b] - 127);
    for (int c = 0; c < 16; ++c) source[c] = t.e2m1[c] * block_scale;
    const uint8_t* in = packed + b * 16;
    const uint8_t* out = fp8 + b * 32;
    bool differs = false;
    for (int i = 0; i < 16; ++i) {
      differs |= !(source[in[i] & 15] == converted[out[2 * i]]);
      differs |= !(source[in[i] >> 4] == converted[out[2 * i + 1]]);
    }
    if (!differs) continue;
    for (int i = 0; i < 32; ++i) {
      const int code = i % 2 == 0 ? in[i / 2] & 15 : in[i / 2] >> 4;
      if (!(source[code] == converted[out[i]])) return b * 32 + i;
    }
  }
  return -1;
}

int64_t first_bf16_mismatch(const uint8_t* packed, const uint8_t* scales, int64_t cols,
                            const uint8_t* bf16) {
  const VerifyTables& t = verify_tables();
  for (int64_t b = 0; b < cols / 32; ++b) {
    const double block_scale = std::ldexp(1.0, scales[b] - 127);
    for (int64_t col = b * 32; col < b * 32 + 32; ++col) {
      const double source = t.e2m1[nibble(packed, col)] * block_scale;
      uint16_t bits;
      std::memcpy(&bits, bf16 + 2 * col, 2);
      const double converted = bf16_to_f32(bits);
      if (scales[b] == 0xFF || bits == 0x8000 || !(source == converted)) return col;
    }
  }
  return -1;
}

double mxfp4_element_f64(const uint8_t* packed, const uint8_t* scales, int64_t col) {
  const uint8_t x = scales[col / 32];
  return e2m1_to_f64(static_cast<uint8_t>(nibble(packed, col))) * e8m0_to_f64(x);
}

}  // namespace minimax
