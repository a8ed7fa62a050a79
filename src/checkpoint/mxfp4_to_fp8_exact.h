// The exact MXFP4 -> FP8 re-encoding of one output channel (row), as pure functions: the row's
// exponent range, the choice of its power-of-two scale, the encoders (FP8 e4m3 for routed experts,
// BF16 for other MXFP4 tensors) and the float64 verification of what they wrote
// (spec/formats.md §8.4, docs/convert.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace minimax {

// Which FP8 hardware the scales are chosen for.
//  - kOcp: values max-aligned for OCP e4m3fn (the largest element lands in the 2^8 binade, at most
//    1.5 * 2^8 = 384 <= 448) and the smallest kept at >= 2^-5, one binade above e4m3's smallest
//    normal, so a loader that halves FP8 weights (vllm-gaudi's VLLM_SCALE_ADJUSTMENT on Gaudi 2)
//    stays exact and normal. Element exponents in [-5, 8].
//  - kGaudi2: values within Gaudi 2's +-240 (largest element in the 2^7 binade, <= 192) and normal
//    (>= 2^-6); the config carries fp8_dtype_flavor so vllm-gaudi does not halve. Exponents in
//    [-6, 7]. Gaudi 2's subnormals are not relied upon.
// Both accept rows whose nonzero elements span at most 13 binades (E_hi - E_lo <= 13).
enum class Fp8Target { kOcp, kGaudi2 };

std::string_view fp8_target_name(Fp8Target target);  // "ocp" / "gaudi2"
// Parses "ocp" / "gaudi2"; Error naming `option` otherwise.
Fp8Target parse_fp8_target(const std::string& text, std::string_view option = "--target");

// Inclusive range of unbiased exponents an FP8 element q = +-M * 2^e (M in {1, 1.5}) may take.
struct Fp8Window {
  int min_exponent;
  int max_exponent;
};
Fp8Window fp8_window(Fp8Target target);

// The smallest scale exponent written: 2^-126 is the smallest normal f32 (and bf16).
inline constexpr int kMinScaleExponent = -126;

// floor(log2|v|) range of the nonzero elements of one MXFP4 row.
struct Mxfp4RowRange {
  bool any_nonzero = false;
  int min_exponent = 0, max_exponent = 0;  // valid when any_nonzero
  int64_t min_block = -1, max_block = -1;  // a block (32 elements) holding each extreme
  int64_t nan_block = -1;                  // first block whose scale is 0xFF (e8m0 NaN), or -1
};

// Scans `cols` elements (cols % 32 == 0): cols/2 packed bytes (low nibble = even element) and
// cols/32 e8m0 scale bytes. All-zero blocks impose no constraint, whatever their scale byte
// (except 0xFF, which is reported in nan_block: the whole block is NaN by the MX spec).
Mxfp4RowRange scan_mxfp4_row(const uint8_t* packed, const uint8_t* scales, int64_t cols);

// The scale exponent S (weight_scale = 2^S) for a row: S = max_exponent - window.max_exponent
// (max-aligned), or 0 for an all-zero row. nullopt when the row cannot be exact: the smallest
// element would fall below the window (span > 13 binades), or S < kMinScaleExponent.
// Precondition: nan_block == -1.
std::optional<int> choose_row_scale(const Mxfp4RowRange& range, Fp8Target target);

// Why choose_row_scale refused `range`: the exponent range found and the limit it breaks.
std::string describe_unrepresentable_row(const Mxfp4RowRange& range, Fp8Target target);

// Writes cols FP8 e4m3fn codes: out[i] = v[i] / 2^S exactly, -0 written as +0 (0x00).
// Precondition: S = choose_row_scale(scan of the same row). An element outside the window (the
// precondition broken) is written as the NaN code 0x7F, which verification then reports.
void encode_row_fp8(const uint8_t* packed, const uint8_t* scales, int64_t cols, int scale_exponent,
                    uint8_t* out);

// True when every element of the row is exactly representable in BF16: E_hi <= 127 (MXFP4 values
// never go below 2^-128, which bf16 holds exactly as a subnormal since M in {1, 1.5}).
bool row_fits_bf16(const Mxfp4RowRange& range);
// Writes cols BF16 values (little-endian uint16 bits, 2*cols bytes) equal to the row's values,
// -0 written as +0. Precondition: row_fits_bf16; otherwise the element becomes a NaN.
void encode_row_bf16(const uint8_t* packed, const uint8_t* scales, int64_t cols, uint8_t* out);

// Float64 verification of an encoded row against the float64 decode of its MXFP4 source, with
// decoders built from the reference codecs of formats/float_formats.h (not the encoders above).
// Returns the first column whose decoded value differs, or whose code is a negative zero; -1 when
// the row is exact. The comparison is decided once per block shift (the one code, if any, whose
// float64 value equals each source code's) and applied by table lookup; docs/convert.md gives
// why that is the same test.
int64_t first_fp8_mismatch(const uint8_t* packed, const uint8_t* scales, int64_t cols,
                           int scale_exponent, const uint8_t* fp8);
int64_t first_bf16_mismatch(const uint8_t* packed, const uint8_t* scales, int64_t cols,
                            const uint8_t* bf16);

// Float64 values used in mismatch messages.
double mxfp4_element_f64(const uint8_t* packed, const uint8_t* scales, int64_t col);

}  // namespace minimax
