// Row-level MXFP4 -> FP8 / BF16 re-encoding: the worked vectors of spec/formats.md §8, the limits
// of each target, 0xFF scales, subnormal boundaries, -0, and random rows.
#include "checkpoint/mxfp4_to_fp8_exact.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/error.h"
#include "formats/float_formats.h"

namespace minimax {
namespace {

// One row of `blocks` MXFP4 blocks: 16 packed bytes + 1 scale byte each.
struct Row {
  std::vector<uint8_t> packed, scales;
  int64_t cols() const { return static_cast<int64_t>(scales.size()) * 32; }
  void add_block(const std::vector<uint8_t>& sixteen_bytes, uint8_t scale) {
    packed.insert(packed.end(), sixteen_bytes.begin(), sixteen_bytes.end());
    scales.push_back(scale);
  }
  // A block whose 32 elements all hold e2m1 code `code`.
  void add_uniform(uint8_t code, uint8_t scale) {
    add_block(std::vector<uint8_t>(16, static_cast<uint8_t>(code | code << 4)), scale);
  }
};

// §8.1: every e2m1 code twice, in element order 0..15 (low nibble first).
const std::vector<uint8_t> kAllCodes = {0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE,
                                        0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE};

std::vector<uint8_t> encode(const Row& row, int s) {
  std::vector<uint8_t> out(row.cols());
  encode_row_fp8(row.packed.data(), row.scales.data(), row.cols(), s, out.data());
  return out;
}

TEST(ConvertEncode, DecodesTheSpecMxfp4Vectors) {
  Row row;
  row.add_block(kAllCodes, 0x7F);
  row.add_block(kAllCodes, 0x80);
  row.add_block(kAllCodes, 0x00);
  const double at_127[16] = {0, .5, 1, 1.5, 2, 3, 4, 6, -0.0, -.5, -1, -1.5, -2, -3, -4, -6};
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(mxfp4_element_f64(row.packed.data(), row.scales.data(), i), at_127[i]) << i;
    EXPECT_EQ(mxfp4_element_f64(row.packed.data(), row.scales.data(), 32 + i), 2 * at_127[i]);
  }
  EXPECT_EQ(mxfp4_element_f64(row.packed.data(), row.scales.data(), 64 + 1), std::ldexp(1.0, -128));
  EXPECT_EQ(mxfp4_element_f64(row.packed.data(), row.scales.data(), 64 + 7),
            1.5 * std::ldexp(1.0, -125));
}

// §8.3: block A with X = 120, block B with X = 127 -> S = -6 and the spec's bytes, except that
// the -0 elements (spec: 0x80) are written as +0.
TEST(ConvertEncode, WorkedVectorOfSpec83) {
  Row row;
  row.add_block(kAllCodes, 120);
  row.add_block(kAllCodes, 127);
  const Mxfp4RowRange range = scan_mxfp4_row(row.packed.data(), row.scales.data(), row.cols());
  ASSERT_TRUE(range.any_nonzero);
  EXPECT_EQ(range.min_exponent, -8);  // 0.5 * 2^-7
  EXPECT_EQ(range.max_exponent, 2);   // 6 * 2^0
  ASSERT_EQ(choose_row_scale(range, Fp8Target::kOcp), -6);
  const std::vector<uint8_t> out = encode(row, -6);
  const std::vector<uint8_t> block_a = {0x00, 0x28, 0x30, 0x34, 0x38, 0x3C, 0x40, 0x44,
                                        0x00, 0xA8, 0xB0, 0xB4, 0xB8, 0xBC, 0xC0, 0xC4};
  const std::vector<uint8_t> block_b = {0x00, 0x60, 0x68, 0x6C, 0x70, 0x74, 0x78, 0x7C,
                                        0x00, 0xE0, 0xE8, 0xEC, 0xF0, 0xF4, 0xF8, 0xFC};
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(out[i], block_a[i % 16]) << "block A element " << i;
    EXPECT_EQ(out[32 + i], block_b[i % 16]) << "block B element " << i;
  }
  EXPECT_EQ(first_fp8_mismatch(row.packed.data(), row.scales.data(), row.cols(), -6, out.data()),
            -1);
}

TEST(ConvertEncode, Gaudi2AlignsTheTopTo192) {
  Row row;
  row.add_block(kAllCodes, 120);
  row.add_block(kAllCodes, 127);
  const Mxfp4RowRange range = scan_mxfp4_row(row.packed.data(), row.scales.data(), row.cols());
  ASSERT_EQ(choose_row_scale(range, Fp8Target::kGaudi2), -5);
  const std::vector<uint8_t> out = encode(row, -5);
  EXPECT_EQ(out[32 + 7], 0x74);  // 6 * 2^0 / 2^-5 = 192 = 1.5 * 2^7
  EXPECT_EQ(out[1], 0x20);       // 0.5 * 2^-7 / 2^-5 = 2^-3
  for (uint8_t code : out) EXPECT_LE(fp8_to_f64(code, Fp8Format::kE4M3FN), 240.0);
  EXPECT_EQ(first_fp8_mismatch(row.packed.data(), row.scales.data(), row.cols(), -5, out.data()),
            -1);
}

// A row whose smallest element is 0.5 * 2^(lo_x - 127) and largest 6 * 2^(hi_x - 127): span
// (2 + hi_x - 127) - (-1 + lo_x - 127) = 3 + hi_x - lo_x binades.
Row span_row(int lo_x, int hi_x) {
  Row row;
  row.add_uniform(0x1, static_cast<uint8_t>(lo_x));
  row.add_uniform(0x7, static_cast<uint8_t>(hi_x));
  return row;
}

TEST(ConvertEncode, OcpAcceptsThirteenBinadesAndRefusesFourteen) {
  const Row edge = span_row(100, 110);  // span 13
  const Mxfp4RowRange range = scan_mxfp4_row(edge.packed.data(), edge.scales.data(), edge.cols());
  EXPECT_EQ(range.max_exponent - range.min_exponent, 13);
  const std::optional<int> s = choose_row_scale(range, Fp8Target::kOcp);
  ASSERT_TRUE(s.has_value());
  const std::vector<uint8_t> out = encode(edge, *s);
  EXPECT_EQ(out[0], 0x10);   // smallest: 2^-5, one binade above e4m3's smallest normal 2^-6
  EXPECT_EQ(out[32], 0x7C);  // largest: 384, max-aligned
  EXPECT_EQ(first_fp8_mismatch(edge.packed.data(), edge.scales.data(), edge.cols(), *s, out.data()),
            -1);

  const Row past = span_row(100, 111);  // span 14
  const Mxfp4RowRange past_range =
      scan_mxfp4_row(past.packed.data(), past.scales.data(), past.cols());
  EXPECT_FALSE(choose_row_scale(past_range, Fp8Target::kOcp).has_value());
  const std::string why = describe_unrepresentable_row(past_range, Fp8Target::kOcp);
  EXPECT_NE(why.find("14 binades"), std::string::npos) << why;
  EXPECT_NE(why.find("2^-28"), std::string::npos) << why;  // -1 + 100 - 127
  EXPECT_NE(why.find("2^-14"), std::string::npos) << why;  // 2 + 111 - 127
}

TEST(ConvertEncode, Gaudi2AcceptsThirteenBinadesAndRefusesFourteen) {
  const Row edge = span_row(100, 110);
  const Mxfp4RowRange range = scan_mxfp4_row(edge.packed.data(), edge.scales.data(), edge.cols());
  const std::optional<int> s = choose_row_scale(range, Fp8Target::kGaudi2);
  ASSERT_TRUE(s.has_value());
  const std::vector<uint8_t> out = encode(edge, *s);
  EXPECT_EQ(out[0], 0x08);   // 2^-6: e4m3's smallest normal
  EXPECT_EQ(out[32], 0x74);  // 192 <= 240
  const Row past = span_row(100, 111);
  EXPECT_FALSE(choose_row_scale(scan_mxfp4_row(past.packed.data(), past.scales.data(), past.cols()),
                                Fp8Target::kGaudi2)
                   .has_value());
}

// The point of the OCP margin: vllm-gaudi halves every FP8 weight on Gaudi 2; each halved code must
// still be an exact e4m3 normal. And nothing an OCP row writes is above 384 or below 2^-5.
TEST(ConvertEncode, OcpOutputSurvivesGaudi2Halving) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    Row row;
    const int base = 90 + static_cast<int>(rng() % 60);
    for (int b = 0; b < 8; ++b) {
      std::vector<uint8_t> bytes(16);
      for (uint8_t& byte : bytes) byte = static_cast<uint8_t>(rng());
      row.add_block(bytes, static_cast<uint8_t>(base + rng() % 11));  // spans <= 13
    }
    const Mxfp4RowRange range = scan_mxfp4_row(row.packed.data(), row.scales.data(), row.cols());
    const std::optional<int> s = choose_row_scale(range, Fp8Target::kOcp);
    ASSERT_TRUE(s.has_value());
    const std::vector<uint8_t> out = encode(row, *s);
    ASSERT_EQ(first_fp8_mismatch(row.packed.data(), row.scales.data(), row.cols(), *s, out.data()),
              -1);
    for (uint8_t code : out) {
      const double v = fp8_to_f64(code, Fp8Format::kE4M3FN);
      if (v == 0) {
        EXPECT_EQ(code, 0x00);  // never -0
        continue;
      }
      EXPECT_LE(std::fabs(v), 384.0);
      EXPECT_GE(std::fabs(v), 1.0 / 32);
      const uint8_t halved = f64_to_fp8(v / 2, Fp8Format::kE4M3FN);
      EXPECT_EQ(fp8_to_f64(halved, Fp8Format::kE4M3FN), v / 2);
      EXPECT_GE(std::fabs(v / 2), fp8_limits(Fp8Format::kE4M3FN).min_normal);
    }
  }
}

TEST(ConvertEncode, ScaleExponentBelowMinus126IsRefused) {
  Row ok;
  ok.add_uniform(0x7, 7);  // 6 * 2^-120 = 1.5 * 2^-118 -> S = -126
  const Mxfp4RowRange ok_range = scan_mxfp4_row(ok.packed.data(), ok.scales.data(), ok.cols());
  EXPECT_EQ(choose_row_scale(ok_range, Fp8Target::kOcp), -126);
  Row tiny;
  tiny.add_uniform(0x7, 6);  // S would be -127
  const Mxfp4RowRange range = scan_mxfp4_row(tiny.packed.data(), tiny.scales.data(), tiny.cols());
  EXPECT_FALSE(choose_row_scale(range, Fp8Target::kOcp).has_value());
  EXPECT_NE(describe_unrepresentable_row(range, Fp8Target::kOcp).find("2^-127"), std::string::npos);
}

TEST(ConvertEncode, NanScaleIsReportedEvenInAZeroBlock) {
  Row row;
  row.add_uniform(0x2, 127);
  row.add_uniform(0x0, 0xFF);
  const Mxfp4RowRange range = scan_mxfp4_row(row.packed.data(), row.scales.data(), row.cols());
  EXPECT_EQ(range.nan_block, 1);
  std::vector<uint8_t> out(row.cols(), 0x38);
  EXPECT_EQ(first_fp8_mismatch(row.packed.data(), row.scales.data(), row.cols(), 0, out.data()),
            32);
}

TEST(ConvertEncode, ZeroBlocksImposeNoConstraint) {
  Row row;
  row.add_uniform(0x0, 0);    // zeros at 2^-127
  row.add_uniform(0x8, 254);  // -0 at 2^127
  row.add_uniform(0x4, 127);  // 2.0
  const Mxfp4RowRange range = scan_mxfp4_row(row.packed.data(), row.scales.data(), row.cols());
  EXPECT_EQ(range.min_exponent, 1);
  EXPECT_EQ(range.max_exponent, 1);
  const std::optional<int> s = choose_row_scale(range, Fp8Target::kOcp);
  ASSERT_EQ(s, -7);
  const std::vector<uint8_t> out = encode(row, *s);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], 0x00) << i;  // -0 written as +0
  EXPECT_EQ(out[64], 0x78);                                   // 2 / 2^-7 = 256

  Row zeros;
  zeros.add_uniform(0x8, 3);
  const Mxfp4RowRange zero_range =
      scan_mxfp4_row(zeros.packed.data(), zeros.scales.data(), zeros.cols());
  EXPECT_FALSE(zero_range.any_nonzero);
  EXPECT_EQ(choose_row_scale(zero_range, Fp8Target::kGaudi2), 0);
}

TEST(ConvertEncode, VerificationCatchesNegativeZeroAndWrongCodes) {
  Row row;
  row.add_block(kAllCodes, 127);
  const int s =
      *choose_row_scale(scan_mxfp4_row(row.packed.data(), row.scales.data(), 32), Fp8Target::kOcp);
  std::vector<uint8_t> out = encode(row, s);
  out[8] = 0x80;  // element 8 is -0 in the source: value-equal, but a -0 code is refused
  EXPECT_EQ(first_fp8_mismatch(row.packed.data(), row.scales.data(), 32, s, out.data()), 8);
  out = encode(row, s);
  out[5] ^= 0x01;
  EXPECT_EQ(first_fp8_mismatch(row.packed.data(), row.scales.data(), 32, s, out.data()), 5);
  out = encode(row, s);
  EXPECT_EQ(first_fp8_mismatch(row.packed.data(), row.scales.data(), 32, s + 1, out.data()), 1);
}

// The check compares codes through tables instead of decoding each element to float64; it must
// give the float64 comparison's verdict (fp8(out) * 2^S == e2m1(code) * 2^(X-127), and out not
// 0x80) for every code, every output byte, and block scales and row scales across their range,
// and name the first failing column.
TEST(ConvertEncode, CheckEqualsTheFloat64ComparisonForEveryCodePair) {
  for (int x : {0, 1, 2, 60, 120, 127, 128, 135, 200, 253, 254}) {
    for (int s : {-126, -125, -60, -7, -6, -1, 0, 1, 5, 6, 7, 60, 121, 122}) {
      for (int code = 0; code < 16; ++code) {
        Row row;
        row.add_uniform(static_cast<uint8_t>(code), static_cast<uint8_t>(x));
        const double source = e2m1_to_f64(static_cast<uint8_t>(code)) * std::ldexp(1.0, x - 127);
        for (int q = 0; q < 256; ++q) {
          const bool equal = q != 0x80 && fp8_to_f64(static_cast<uint8_t>(q), Fp8Format::kE4M3FN) *
                                                  std::ldexp(1.0, s) ==
                                              source;
          std::vector<uint8_t> out(32, static_cast<uint8_t>(q));
          ASSERT_EQ(first_fp8_mismatch(row.packed.data(), row.scales.data(), 32, s, out.data()),
                    equal ? -1 : 0)
              << "X " << x << " S " << s << " code " << code << " out 0x" << std::hex << q;
        }
      }
    }
  }
}

TEST(ConvertEncode, CheckNamesTheFirstWrongColumnOfLongRows) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    Row row;
    const int blocks = 1 + static_cast<int>(rng() % 40);
    for (int b = 0; b < blocks; ++b) {
      std::vector<uint8_t> bytes(16);
      for (uint8_t& v : bytes) v = static_cast<uint8_t>(rng());
      row.add_block(bytes, static_cast<uint8_t>(120 + rng() % 8));
    }
    const auto s = choose_row_scale(
        scan_mxfp4_row(row.packed.data(), row.scales.data(), row.cols()), Fp8Target::kOcp);
    ASSERT_TRUE(s);
    std::vector<uint8_t> out = encode(row, *s);
    ASSERT_EQ(first_fp8_mismatch(row.packed.data(), row.scales.data(), row.cols(), *s, out.data()),
              -1);
    const int64_t wrong = static_cast<int64_t>(rng() % row.cols());
    out[wrong] ^= static_cast<uint8_t>(1 + rng() % 255);
    // Flipping bits of a zero's code may give 0x80 (refused) or another value: either way wrong.
    EXPECT_EQ(first_fp8_mismatch(row.packed.data(), row.scales.data(), row.cols(), *s, out.data()),
              wrong);
  }
}

TEST(ConvertEncode, Bf16CheckEqualsTheFloat64Comparison) {
  std::mt19937 rng(9);
  for (int x : {0, 1, 5, 100, 127, 200, 253, 254}) {
    for (int code = 0; code < 16; ++code) {
      Row row;
      row.add_uniform(static_cast<uint8_t>(code), static_cast<uint8_t>(x));
      std::vector<uint8_t> good(64);
      encode_row_bf16(row.packed.data(), row.scales.data(), 32, good.data());
      uint16_t encoded;
      std::memcpy(&encoded, good.data(), 2);
      const double source = e2m1_to_f64(static_cast<uint8_t>(code)) * std::ldexp(1.0, x - 127);
      std::vector<uint16_t> candidates = {encoded,
                                          static_cast<uint16_t>(encoded + 1),
                                          static_cast<uint16_t>(encoded - 1),
                                          0x0000,
                                          0x8000,
                                          0x7FC0,
                                          0xFF80};
      for (int k = 0; k < 40; ++k) candidates.push_back(static_cast<uint16_t>(rng()));
      for (uint16_t bits : candidates) {
        const bool equal = bits != 0x8000 && static_cast<double>(bf16_to_f32(bits)) == source;
        std::vector<uint8_t> out(64);
        for (int i = 0; i < 32; ++i) std::memcpy(out.data() + 2 * i, &bits, 2);
        ASSERT_EQ(first_bf16_mismatch(row.packed.data(), row.scales.data(), 32, out.data()),
                  equal ? -1 : 0)
            << "X " << x << " code " << code << " bits 0x" << std::hex << bits;
      }
    }
  }
}

// An S that would push elements into e4m3's subnormals (or above 448) breaks the precondition:
// the encoder writes NaN there and verification reports the first such column.
TEST(ConvertEncode, SubnormalTargetsAreNeverWritten) {
  Row row;
  row.add_block(kAllCodes, 127);  // exponents -1 .. 2
  // S = 6: 0.5 -> 2^-7 (an e4m3 subnormal, code 0x04 would be exact) is still refused.
  std::vector<uint8_t> out = encode(row, 6);
  EXPECT_EQ(out[1], 0x7F);
  EXPECT_EQ(out[2], 0x08);  // 1 -> 2^-6, the smallest normal, is fine
  EXPECT_EQ(first_fp8_mismatch(row.packed.data(), row.scales.data(), 32, 6, out.data()), 1);
  // S = -7: 3 -> 1.5 * 2^8 = 384 is fine, 4 -> 2^9 = 512 > 448 is not.
  out = encode(row, -7);
  EXPECT_EQ(out[5], 0x7C);
  EXPECT_EQ(out[6], 0x7F);
  EXPECT_EQ(first_fp8_mismatch(row.packed.data(), row.scales.data(), 32, -7, out.data()), 6);
}

TEST(ConvertEncode, Bf16IsExactDownToTheSmallestMxfp4Value) {
  Row row;
  row.add_block(kAllCodes, 0);  // 2^-128 .. 1.5 * 2^-125: bf16 subnormals and normals
  row.add_block(kAllCodes, 1);
  row.add_block(kAllCodes, 252);  // up to 6 * 2^125 = 1.5 * 2^127
  const Mxfp4RowRange range = scan_mxfp4_row(row.packed.data(), row.scales.data(), row.cols());
  ASSERT_TRUE(row_fits_bf16(range));
  std::vector<uint8_t> out(2 * row.cols());
  encode_row_bf16(row.packed.data(), row.scales.data(), row.cols(), out.data());
  EXPECT_EQ(first_bf16_mismatch(row.packed.data(), row.scales.data(), row.cols(), out.data()), -1);
  EXPECT_EQ(out[2], 0x20);  // element 1 = 2^-128 = 32 * 2^-133: bf16 subnormal 0x0020
  EXPECT_EQ(out[3], 0x00);
  EXPECT_EQ(out[16], 0x00);  // -0 written as +0
  EXPECT_EQ(out[17], 0x00);

  Row big;
  big.add_uniform(0x6, 253);  // 4 * 2^126 = 2^128: past bf16's largest finite
  EXPECT_FALSE(row_fits_bf16(scan_mxfp4_row(big.packed.data(), big.scales.data(), big.cols())));
}

// The exponent scan against the definition: floor(log2|v|) over the decoded nonzero elements.
TEST(ConvertEncode, ScanMatchesBruteForce) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 500; ++trial) {
    Row row;
    for (int b = 0; b < 4; ++b) {
      std::vector<uint8_t> bytes(16);
      // Sparse blocks too, so that zero elements and all-zero blocks occur.
      const int density = static_cast<int>(rng() % 4);
      for (uint8_t& byte : bytes) {
        byte = static_cast<uint8_t>(rng());
        if (density == 0 || rng() % 4 < static_cast<unsigned>(3 - density)) byte &= 0x88;
      }
      row.add_block(bytes, static_cast<uint8_t>(rng() % 255));
    }
    bool any = false;
    int lo = 0, hi = 0;
    for (int64_t c = 0; c < row.cols(); ++c) {
      const double v = mxfp4_element_f64(row.packed.data(), row.scales.data(), c);
      if (v == 0) continue;
      const int e = std::ilogb(v);
      lo = any ? std::min(lo, e) : e;
      hi = any ? std::max(hi, e) : e;
      any = true;
    }
    const Mxfp4RowRange range = scan_mxfp4_row(row.packed.data(), row.scales.data(), row.cols());
    ASSERT_EQ(range.any_nonzero, any);
    if (!any) continue;
    EXPECT_EQ(range.min_exponent, lo);
    EXPECT_EQ(range.max_exponent, hi);
  }
}

TEST(ConvertEncode, ParsesTargets) {
  EXPECT_EQ(parse_fp8_target("ocp"), Fp8Target::kOcp);
  EXPECT_EQ(parse_fp8_target("gaudi2"), Fp8Target::kGaudi2);
  EXPECT_THROW(parse_fp8_target("fnuz"), Error);
}

}  // namespace
}  // namespace minimax
