// Exact MXFP4 -> FP8 / BF16 row re-encoding: exponent scan, scale choice, table-driven encoders and
// the float64 verification built on the reference codecs.
#include "checkpoint/mxfp4_to_fp8_exact.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <tmmintrin.h>  // SSSE3, used behind a run-time check
#define MINIMAX_CONVERT_SSSE3 1
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
// k in [-1, 2]), the FP8 code each of the 16 nibble codes becomes.
constexpr int kMinShift = -8, kMaxShift = 9;
struct Fp8NibbleTables {
  struct alignas(16) Codes {
    uint8_t code[16];
  };
  std::array<Codes, kMaxShift - kMinShift + 2> by_shift{};  // last: zeros only
  Fp8NibbleTables() {
    for (int d = kMinShift; d <= kMaxShift + 1; ++d) {
      const int shift = d <= kMaxShift ? d : 1000;  // out of range: nonzero codes -> NaN
      for (int c = 0; c < 16; ++c) by_shift[d - kMinShift].code[c] = fp8_code(c, shift);
    }
  }
  const Codes& for_shift(int d) const {
    if (d < kMinShift || d > kMaxShift) return by_shift.back();
    return by_shift[d - kMinShift];
  }
};
const Fp8NibbleTables& fp8_nibble_tables() {
  static const Fp8NibbleTables table;
  return table;
}

bool has_ssse3() {
#if defined(MINIMAX_CONVERT_SSSE3)
  static const bool yes = __builtin_cpu_supports("ssse3");
  return yes;
#else
  return false;
#endif
}

#if defined(MINIMAX_CONVERT_SSSE3)
// The 32 bytes table[nibble] of one block's 16 packed bytes, low nibble (even element) first.
__attribute__((target("ssse3"))) inline void lookup_block_ssse3(const uint8_t* table16,
                                                                const uint8_t* packed,
                                                                __m128i* first, __m128i* second) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(packed));
  const __m128i low4 = _mm_set1_epi8(0x0F);
  const __m128i lo = _mm_and_si128(v, low4), hi = _mm_and_si128(_mm_srli_epi16(v, 4), low4);
  const __m128i table = _mm_load_si128(reinterpret_cast<const __m128i*>(table16));
  const __m128i a = _mm_shuffle_epi8(table, lo), b = _mm_shuffle_epi8(table, hi);
  *first = _mm_unpacklo_epi8(a, b);
  *second = _mm_unpackhi_epi8(a, b);
}

__attribute__((target("ssse3"))) void encode_fp8_ssse3(const uint8_t* packed, const uint8_t* scales,
                                                       int64_t blocks, int scale_exponent,
                                                       uint8_t* out) {
  const Fp8NibbleTables& tables = fp8_nibble_tables();
  for (int64_t b = 0; b < blocks; ++b) {
    __m128i first, second;
    lookup_block_ssse3(tables.for_shift(scales[b] - 127 - scale_exponent).code, packed + b * 16,
                       &first, &second);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + b * 32), first);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + b * 32 + 16), second);
  }
}
#endif

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

// The float64 check, decided once per block shift instead of once per element. An element passes
// when fp8(out) * 2^S == e2m1(code) * 2^(X - 127) in float64 and out is not 0x80 (-0). Every
// value here is a small integer times a power of two well inside float64's range, so both sides
// are exact and the test is the same as fp8(out) == e2m1(code) * 2^d with d = X - 127 - S: for each
// d and code, comparing with all 256 FP8 codes finds the codes that pass. FP8 e4m3fn has one code
// per finite value and -0 is refused, so there is at most one (`valid` 0xFF) or none (0x00); an
// element then passes exactly when out == code[nibble] and valid[nibble]. The tables come from
// the reference decoders only, never from the encoder above.
struct Fp8CheckEntry {
  alignas(16) uint8_t code[16];
  alignas(16) uint8_t valid[16];
};

Fp8CheckEntry fp8_check_entry(int d) {
  const VerifyTables& t = verify_tables();
  Fp8CheckEntry entry{};
  for (int c = 0; c < 16; ++c) {
    const double source = t.e2m1[c] * std::ldexp(1.0, d);
    int found = 0;
    for (int q = 0; q < 256; ++q) {
      if (q == 0x80 || !(t.fp8[q] == source)) continue;
      entry.code[c] = static_cast<uint8_t>(q);
      ++found;
    }
    if (found > 1) fail("convert: FP8 codes are not unique for {} * 2^{}", t.e2m1[c], d);
    entry.valid[c] = found == 1 ? 0xFF : 0x00;
  }
  return entry;
}

// Every shift a real row has (X in [0, 254], S in [-126, 122]) and more.
constexpr int kMinCheckShift = -400, kMaxCheckShift = 400;
const std::vector<Fp8CheckEntry>& fp8_check_entries() {
  static const std::vector<Fp8CheckEntry> entries = [] {
    std::vector<Fp8CheckEntry> all;
    for (int d = kMinCheckShift; d <= kMaxCheckShift; ++d) all.push_back(fp8_check_entry(d));
    return all;
  }();
  return entries;
}

#if defined(MINIMAX_CONVERT_SSSE3)
// The first block of the row that fails, or -1 (a whole row per call, so the block check inlines).
__attribute__((target("ssse3"))) int64_t first_failing_block_ssse3(
    const std::vector<Fp8CheckEntry>& entries, const uint8_t* packed, const uint8_t* scales,
    int64_t blocks, int scale_exponent, const uint8_t* fp8) {
  for (int64_t b = 0; b < blocks; ++b) {
    const int d = scales[b] - 127 - scale_exponent;
    if (scales[b] == 0xFF || d < kMinCheckShift || d > kMaxCheckShift) return b;
    const Fp8CheckEntry& e = entries[d - kMinCheckShift];
    __m128i code0, code1, valid0, valid1;
    lookup_block_ssse3(e.code, packed + b * 16, &code0, &code1);
    lookup_block_ssse3(e.valid, packed + b * 16, &valid0, &valid1);
    const __m128i out0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(fp8 + b * 32));
    const __m128i out1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(fp8 + b * 32 + 16));
    const __m128i pass = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(code0, out0), valid0),
                                       _mm_and_si128(_mm_cmpeq_epi8(code1, out1), valid1));
    if (_mm_movemask_epi8(pass) != 0xFFFF) return b;
  }
  return -1;
}
#endif

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
  const int64_t blocks = cols / 32;
#if defined(MINIMAX_CONVERT_SSSE3)
  if (has_ssse3()) return encode_fp8_ssse3(packed, scales, blocks, scale_exponent, out);
#endif
  const Fp8NibbleTables& tables = fp8_nibble_tables();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* codes = tables.for_shift(scales[b] - 127 - scale_exponent).code;
    const uint8_t* in = packed + b * 16;
    for (int i = 0; i < 16; ++i) {
      out[b * 32 + 2 * i] = codes[in[i] & 15];
      out[b * 32 + 2 * i + 1] = codes[in[i] >> 4];
    }
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
  const std::vector<Fp8CheckEntry>& entries = fp8_check_entries();
  const int64_t blocks = cols / 32;
  int64_t b = 0;
#if defined(MINIMAX_CONVERT_SSSE3)
  // The fast path finds the first block that is not plainly exact; the scalar loop below then
  // looks at it (and what follows) element by element.
  if (has_ssse3()) {
    b = first_failing_block_ssse3(entries, packed, scales, blocks, scale_exponent, fp8);
    if (b < 0) return -1;
  }
#endif
  for (; b < blocks; ++b) {
    // A NaN scale (0xFF) makes every element NaN, which equals nothing.
    if (scales[b] == 0xFF) return b * 32;
    const int d = scales[b] - 127 - scale_exponent;
    const bool tabled = d >= kMinCheckShift && d <= kMaxCheckShift;
    const Fp8CheckEntry computed = tabled ? Fp8CheckEntry{} : fp8_check_entry(d);
    const Fp8CheckEntry& e = tabled ? entries[d - kMinCheckShift] : computed;
    const uint8_t* in = packed + b * 16;
    const uint8_t* out = fp8 + b * 32;
    for (int i = 0; i < 32; ++i) {
      const int code = i % 2 == 0 ? in[i / 2] & 15 : in[i / 2] >> 4;
      if (!e.valid[code] || out[i] != e.code[code]) return b * 32 + i;
    }
  }
  return -1;
}

int64_t first_bf16_mismatch(const uint8_t* packed, const uint8_t* scales, int64_t cols,
                            const uint8_t* bf16) {
  // The same float64 check with the BF16 bit patterns that pass, per block scale byte: found by
  // decoding every pattern but -0 (0x8000) and NaNs with the reference bf16_to_f32.
  struct Entry {
    uint16_t bits[16];
    bool valid[16];
  };
  static const std::vector<Entry> entries = [] {
    const VerifyTables& t = verify_tables();
    std::map<double, uint16_t> by_value;
    for (uint32_t bits = 0; bits < 0x10000; ++bits) {
      const double v = bf16_to_f32(static_cast<uint16_t>(bits));
      if (bits == 0x8000 || std::isnan(v)) continue;
      if (!by_value.emplace(v, static_cast<uint16_t>(bits)).second)
        fail("convert: BF16 patterns are not unique for {}", v);
    }
    std::vector<Entry> all(255);
    for (int x = 0; x < 255; ++x)
      for (int c = 0; c < 16; ++c) {
        auto it = by_value.find(t.e2m1[c] * std::ldexp(1.0, x - 127));
        all[x].valid[c] = it != by_value.end();
        all[x].bits[c] = it != by_value.end() ? it->second : 0;
      }
    return all;
  }();
  for (int64_t b = 0; b < cols / 32; ++b) {
    if (scales[b] == 0xFF) return b * 32;
    const Entry& e = entries[scales[b]];
    for (int64_t col = b * 32; col < b * 32 + 32; ++col) {
      const int code = nibble(packed, col);
      uint16_t bits;
      std::memcpy(&bits, bf16 + 2 * col, 2);
      if (!e.valid[code] || bits != e.bits[code]) return col;
    }
  }
  return -1;
}

double mxfp4_element_f64(const uint8_t* packed, const uint8_t* scales, int64_t col) {
  const uint8_t x = scales[col / 32];
  return e2m1_to_f64(static_cast<uint8_t>(nibble(packed, col))) * e8m0_to_f64(x);
}

}  // namespace minimax
