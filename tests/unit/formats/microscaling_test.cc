// Tests of the MXFP4, MXFP8 and NVFP4 block codecs: the decode vectors of spec/formats.md §8.1,
// nibble order, scale choice, exact round trips on grid data and error bounds on random data.
#include "formats/microscaling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "base/error.h"
#include "formats/float_formats.h"

namespace minimax {
namespace {

const double kE2M1Magnitudes[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};

// Half the distance to the neighbouring grid points around |q| (q in units of the block scale).
double half_e2m1_step(double magnitude) {
  if (magnitude <= 2) return 0.25;
  if (magnitude <= 4) return 0.5;
  return 1.0;
}

// Distance from q to the nearest point of the e2m1 grid (both signs), in units of the scale.
double distance_to_e2m1_grid(double q) {
  double best = std::numeric_limits<double>::infinity();
  for (double magnitude : kE2M1Magnitudes)
    best = std::min(best, std::fabs(std::fabs(q) - magnitude));
  return best;
}

std::vector<uint8_t> spec_block_bytes() {  // `10 32 54 76 98 BA DC FE` twice
  return {0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE,
          0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE};
}

void expect_block(const float* got, const std::vector<double>& first16, double factor) {
  for (int i = 0; i < 32; ++i) {
    const double expected = first16[i % 16] * factor;
    EXPECT_EQ(got[i], expected) << "element " << i;
    EXPECT_EQ(std::signbit(got[i]), std::signbit(expected)) << "element " << i;
  }
}

// ---- MXFP4 ----

TEST(Mxfp4, SpecVectors81) {
  const std::vector<uint8_t> bytes = spec_block_bytes();
  float out[32];
  mxfp4_decode_block(bytes.data(), 0x7F, out);
  expect_block(out, {0, .5, 1, 1.5, 2, 3, 4, 6, -0.0, -.5, -1, -1.5, -2, -3, -4, -6}, 1.0);
  mxfp4_decode_block(bytes.data(), 0x80, out);
  expect_block(out, {0, 1, 2, 3, 4, 6, 8, 12, -0.0, -1, -2, -3, -4, -6, -8, -12}, 1.0);
  mxfp4_decode_block(bytes.data(), 0x7E, out);
  expect_block(out, {0, .25, .5, .75, 1, 1.5, 2, 3, -0.0, -.25, -.5, -.75, -1, -1.5, -2, -3}, 1.0);
  mxfp4_decode_block(bytes.data(), 0x00, out);
  expect_block(out, {0, .5, 1, 1.5, 2, 3, 4, 6, -0.0, -.5, -1, -1.5, -2, -3, -4, -6}, 0x1p-127);
  EXPECT_EQ(out[1], 0x1p-128f);
  EXPECT_EQ(out[7], 0x1.8p-125f);

  uint8_t one_byte[16] = {0x21};
  mxfp4_decode_block(one_byte, 127, out);
  EXPECT_EQ(out[0], 0.5f);
  EXPECT_EQ(out[1], 1.0f);
  one_byte[0] = 0xF7;
  mxfp4_decode_block(one_byte, 127, out);
  EXPECT_EQ(out[0], 6.0f);
  EXPECT_EQ(out[1], -6.0f);

  mxfp4_decode_block(bytes.data(), 0xFF, out);
  for (float value : out) EXPECT_TRUE(std::isnan(value));
}

TEST(Mxfp4, EncodingTheSpecVectorsGivesTheirBytesBack) {
  const std::vector<uint8_t> bytes = spec_block_bytes();
  for (uint8_t scale : {0x00, 0x7E, 0x7F, 0x80, 0xF0}) {
    float values[32];
    mxfp4_decode_block(bytes.data(), scale, values);
    uint8_t packed[16];
    EXPECT_EQ(mxfp4_encode_block(values, packed), scale);
    EXPECT_EQ(std::vector<uint8_t>(packed, packed + 16), bytes) << int(scale);
  }
  float pair[32] = {0.5f, 1.0f, 6.0f, -6.0f};  // Quark's [0x1, 0x2] -> 0x21, then 0xF7
  uint8_t packed[16];
  EXPECT_EQ(mxfp4_encode_block(pair, packed), 127);  // amax 6: floor(log2 6) - 2 + 127
  EXPECT_EQ(packed[0], 0x21);
  EXPECT_EQ(packed[1], 0xF7);
}

TEST(Mxfp4, ScaleChoice) {
  float block[32] = {};
  uint8_t packed[16];
  const std::pair<float, int> amax_to_scale[] = {{1.0f, 125},   {4.0f, 127}, {6.0f, 127},
                                                 {7.99f, 127},  {8.0f, 128}, {0.3f, 123},
                                                 {0x1p-140f, 0}};
  for (auto [amax, scale] : amax_to_scale) {
    block[5] = -amax;
    EXPECT_EQ(mxfp4_encode_block(block, packed), scale) << amax;
  }
  block[5] = 7.99f;  // 7.99 / 2^0 lies above 6: saturates to code 7
  mxfp4_encode_block(block, packed);
  EXPECT_EQ(packed[2] >> 4, 0x7);

  float zeros[32] = {};
  zeros[3] = -0.0f;
  EXPECT_EQ(mxfp4_encode_block(zeros, packed), 127);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(packed[i], i == 1 ? 0x80 : 0x00) << i;  // -0 kept
}

TEST(Mxfp4, RejectsNonFiniteInputAndBadLengths) {
  float block[32] = {};
  uint8_t packed[16];
  block[9] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(mxfp4_encode_block(block, packed), Error);
  block[9] = -std::numeric_limits<float>::infinity();
  EXPECT_THROW(mxfp4_encode_block(block, packed), Error);
  std::vector<float> row(48);
  std::vector<uint8_t> bytes(24), scales(2);
  EXPECT_THROW(mxfp4_encode_row(row.data(), 48, bytes.data(), scales.data()), Error);
  EXPECT_THROW(mxfp4_decode_row(bytes.data(), scales.data(), 48, row.data()), Error);
  EXPECT_THROW(mxfp4_decode_row(bytes.data(), scales.data(), -32, row.data()), Error);
}

TEST(Mxfp4, GridDataRoundTripsExactly) {
  std::mt19937 rng(31);
  const int blocks = 200, n = blocks * 32;
  std::vector<uint8_t> packed(n / 2), scales(blocks);
  for (int b = 0; b < blocks; ++b) {
    scales[b] = static_cast<uint8_t>(rng() % 253);  // 0..252: 6 * 2^(X-127) stays a finite float
    for (int j = 0; j < 16; ++j) packed[b * 16 + j] = static_cast<uint8_t>(rng());
    // The block's largest magnitude must be 4 or 6 for the encoder to pick the same scale.
    packed[b * 16 + rng() % 16] = static_cast<uint8_t>((rng() % 2 ? 0x6 : 0xF) | (rng() % 16) << 4);
  }
  std::vector<float> values(n);
  mxfp4_decode_row(packed.data(), scales.data(), n, values.data());
  std::vector<uint8_t> packed_again(n / 2), scales_again(blocks);
  mxfp4_encode_row(values.data(), n, packed_again.data(), scales_again.data());
  EXPECT_EQ(scales_again, scales);
  EXPECT_EQ(packed_again, packed);
}

TEST(Mxfp4, RandomDataRoundsToTheNearestGridPoint) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> block_exponent(-40, 40);
  const int blocks = 500, n = blocks * 32;
  std::vector<float> values(n);
  for (int b = 0; b < blocks; ++b) {
    const float magnitude = std::ldexp(1.0f, block_exponent(rng));
    for (int i = 0; i < 32; ++i) values[b * 32 + i] = normal(rng) * magnitude;
  }
  std::vector<uint8_t> packed(n / 2), scales(blocks);
  mxfp4_encode_row(values.data(), n, packed.data(), scales.data());
  std::vector<float> decoded(n);
  mxfp4_decode_row(packed.data(), scales.data(), n, decoded.data());
  for (int i = 0; i < n; ++i) {
    const double scale = e8m0_to_f64(scales[i / 32]);
    const double q = values[i] / scale;  // exact: power-of-two scale
    const double error = std::fabs(static_cast<double>(decoded[i]) - values[i]) / scale;
    if (std::fabs(q) <= 6) {
      ASSERT_LE(error, half_e2m1_step(std::fabs(q))) << i;
    } else {
      ASSERT_EQ(std::fabs(decoded[i]), 6 * scale) << i;  // saturated
    }
    ASSERT_EQ(error, distance_to_e2m1_grid(q)) << i;  // nothing on the grid is closer
    ASSERT_EQ(std::signbit(decoded[i]), std::signbit(values[i])) << i;
  }
}

// ---- NVFP4 ----

TEST(Nvfp4, DecodeMultipliesElementBlockScaleAndGlobalScale) {
  const std::vector<uint8_t> bytes = spec_block_bytes();
  const std::vector<double> unit = {0, .5, 1, 1.5, 2, 3, 4, 6, -0.0, -.5, -1, -1.5, -2, -3, -4, -6};
  float out[16];
  nvfp4_decode_block(bytes.data(), 0x38, 1.0f, out);  // e4m3 0x38 = 1.0
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], unit[i]) << i;
  nvfp4_decode_block(bytes.data(), 0x30, 4.0f, out);  // 0.5 * 4
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], 2 * unit[i]) << i;
  nvfp4_decode_block(bytes.data(), 0x7E, 0.25f, out);  // 448 / 4
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], 112 * unit[i]) << i;
  const float g = 1.0f / 2688.0f;
  nvfp4_decode_block(bytes.data(), 0x4C, g, out);  // scale 6: element 6 gives 36/2688 rounded once
  EXPECT_EQ(out[7], static_cast<float>(36.0 * static_cast<double>(g)));
  nvfp4_decode_block(bytes.data(), 0x7F, 1.0f, out);  // NaN scale code
  for (float value : out) EXPECT_TRUE(std::isnan(value));
}

TEST(Nvfp4, GlobalScale) {
  EXPECT_EQ(nvfp4_global_scale(2688.0f), 1.0f);
  EXPECT_EQ(nvfp4_global_scale(1344.0f), 0.5f);
  EXPECT_EQ(nvfp4_global_scale(0.0f), 1.0f);
  EXPECT_EQ(nvfp4_global_scale(1.0f), 1.0f / 2688.0f);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> amax(0.01f, 100.0f);
  for (int i = 0; i < 10000; ++i) {  // one correctly rounded division by 2688
    const float a = amax(rng);
    ASSERT_EQ(nvfp4_global_scale(a), static_cast<float>(static_cast<double>(a) / 2688.0)) << a;
  }
  EXPECT_THROW(nvfp4_global_scale(-1.0f), Error);
  EXPECT_THROW(nvfp4_global_scale(std::numeric_limits<float>::quiet_NaN()), Error);
  EXPECT_THROW(nvfp4_global_scale(std::numeric_limits<float>::infinity()), Error);
}

TEST(Nvfp4, GridDataRoundTripsExactly) {
  std::mt19937 rng(77);
  // Global scales with few significant bits, so that 6 * scale * g is exact in f32.
  for (float g : {1.0f, 0x1p-12f, 0.75f, 3.0f}) {
    const int blocks = 300, n = blocks * 16;
    std::vector<uint8_t> packed(n / 2), scales(blocks);
    for (int b = 0; b < blocks; ++b) {
      scales[b] = static_cast<uint8_t>(1 + rng() % 0x7E);  // finite positive e4m3: 0x01..0x7E
      for (int j = 0; j < 8; ++j) packed[b * 8 + j] = static_cast<uint8_t>(rng());
      // Put a +-6 in the block so that amax / 6 / g gives back exactly this scale.
      packed[b * 8 + rng() % 8] = static_cast<uint8_t>((rng() % 2 ? 0x7 : 0xF) | (rng() % 16) << 4);
    }
    std::vector<float> values(n);
    nvfp4_decode_row(packed.data(), scales.data(), g, n, values.data());
    std::vector<uint8_t> packed_again(n / 2), scales_again(blocks);
    nvfp4_encode_row(values.data(), n, g, packed_again.data(), scales_again.data());
    EXPECT_EQ(scales_again, scales) << g;
    EXPECT_EQ(packed_again, packed) << g;
  }
}

TEST(Nvfp4, RandomDataStaysWithinHalfAStep) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> block_log2(-6.0f, 6.0f);
  const int blocks = 1000, n = blocks * 16;
  std::vector<float> values(n);
  float tensor_amax = 0;
  for (int b = 0; b < blocks; ++b) {
    const float magnitude = std::exp2(block_log2(rng)) * 0.01f;
    for (int i = 0; i < 16; ++i) {
      values[b * 16 + i] = normal(rng) * magnitude;
      tensor_amax = std::max(tensor_amax, std::fabs(values[b * 16 + i]));
    }
  }
  const float g = nvfp4_global_scale(tensor_amax);
  std::vector<uint8_t> packed(n / 2), scales(blocks);
  nvfp4_encode_row(values.data(), n, g, packed.data(), scales.data());
  std::vector<float> decoded(n);
  nvfp4_decode_row(packed.data(), scales.data(), g, n, decoded.data());
  int saturated = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_FALSE(fp8_is_nan(scales[i / 16], Fp8Format::kE4M3FN));
    ASSERT_LE(fp8_to_f64(scales[i / 16], Fp8Format::kE4M3FN), 448.0);
    const double divisor = fp8_to_f64(scales[i / 16], Fp8Format::kE4M3FN) * g;
    const double q = values[i] / divisor;
    // Rounding e4m3 scales down can push the block maximum a little past 6: it saturates.
    const double bound = std::fabs(q) <= 6 ? half_e2m1_step(std::fabs(q)) : std::fabs(q) - 6;
    saturated += std::fabs(q) > 6;
    const double error = std::fabs(static_cast<double>(decoded[i]) - values[i]);
    // Slack: the f32 quotient and the f32 product each round once (relative 2^-24).
    ASSERT_LE(error, bound * divisor * (1 + 1e-6) + std::fabs(values[i]) * 0x1p-22) << i;
    // The element is a nearest grid point of q (up to the f32 rounding of the quotient).
    const uint8_t nibble = (i % 2 == 0) ? (packed[i / 2] & 0x0F) : (packed[i / 2] >> 4);
    ASSERT_LE(std::fabs(e2m1_to_f64(nibble) - q), distance_to_e2m1_grid(q) + std::fabs(q) * 1e-6)
        << i;
  }
  EXPECT_GT(saturated, 0);  // the saturating branch was exercised
}

TEST(Nvfp4, ZeroBlocksTinyBlocksAndBadInput) {
  float block[16] = {};
  block[4] = -0.0f;
  uint8_t packed[8];
  EXPECT_EQ(nvfp4_encode_block(block, 1.0f, packed), 0x00);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(packed[i], i == 2 ? 0x08 : 0x00) << i;
  float out[16];
  nvfp4_decode_block(packed, 0x00, 1.0f, out);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], 0.0f);
  EXPECT_TRUE(std::signbit(out[4]));

  block[7] = 0x1p-20f;  // amax / 6 far below e4m3's smallest subnormal: scale and elements 0
  EXPECT_EQ(nvfp4_encode_block(block, 1.0f, packed), 0x00);
  EXPECT_EQ(packed[3], 0x00);

  block[7] = 1e6f;  // 1e6 / 6 > 448: the scale saturates at 448, the element at 6
  EXPECT_EQ(nvfp4_encode_block(block, 1.0f, packed), 0x7E);
  EXPECT_EQ(packed[3] >> 4, 0x7);

  block[7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(nvfp4_encode_block(block, 1.0f, packed), Error);
  block[7] = 1.0f;
  EXPECT_THROW(nvfp4_encode_block(block, 0.0f, packed), Error);
  EXPECT_THROW(nvfp4_encode_block(block, -1.0f, packed), Error);
  std::vector<float> row(24);
  std::vector<uint8_t> bytes(12), scales(2);
  EXPECT_THROW(nvfp4_encode_row(row.data(), 24, 1.0f, bytes.data(), scales.data()), Error);
  EXPECT_THROW(nvfp4_decode_row(bytes.data(), scales.data(), 1.0f, 24, row.data()), Error);
}

// ---- MXFP8 ----

TEST(Mxfp8, ScaleIsTheSmallestPowerOfTwoThatNeedsNoSaturation) {
  float block[32] = {};
  uint8_t codes[32];
  EXPECT_EQ(mxfp8_encode_block(block, codes), 127);  // all zero: scale 1
  block[5] = 448.0f;                                 // exactly the e4m3 maximum: 2^0
  EXPECT_EQ(mxfp8_encode_block(block, codes), 127);
  EXPECT_EQ(codes[5], 0x7E);
  block[5] = 449.0f;  // just above: 2^1, and 449 / 2 rounds to 224
  EXPECT_EQ(mxfp8_encode_block(block, codes), 128);
  EXPECT_EQ(codes[5], f64_to_fp8(224.0, Fp8Format::kE4M3FN));
  block[5] = -3.5f;  // 3.5 / 448 = 2^-7: scale 2^-7, element -448
  EXPECT_EQ(mxfp8_encode_block(block, codes), 120);
  EXPECT_EQ(codes[5], 0xFE);
  block[5] = 1e-39f;  // below 448 * 2^-127 (and a float subnormal): the scale clamps at 2^-127
  EXPECT_EQ(mxfp8_encode_block(block, codes), 0);
  block[5] = -0.0f;
  block[6] = 1.0f;
  mxfp8_encode_block(block, codes);
  EXPECT_EQ(codes[5], 0x80);  // -0 kept
  block[6] = std::numeric_limits<float>::infinity();
  EXPECT_THROW(mxfp8_encode_block(block, codes), Error);
}

TEST(Mxfp8, GridDataRoundTripsExactlyAndRandomDataWithinHalfAStep) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> code(0, 255), exponent(-20, 10);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t n = 256;
  std::vector<float> grid(n), random(n), back(n);
  for (int64_t b = 0; b < n / 32; ++b) {
    const double scale = std::ldexp(1.0, exponent(rng));
    for (int i = 0; i < 32; ++i) {
      int c = code(rng);
      while ((c & 0x7F) == 0x7F) c = code(rng);  // no NaN codes
      grid[b * 32 + i] =
          static_cast<float>(fp8_to_f64(static_cast<uint8_t>(c), Fp8Format::kE4M3FN) * scale);
    }
    grid[b * 32] = static_cast<float>(448.0 * scale);  // the block top fixes the scale
  }
  std::vector<uint8_t> codes(n), scales(n / 32);
  mxfp8_encode_row(grid.data(), n, codes.data(), scales.data());
  mxfp8_decode_row(codes.data(), scales.data(), n, back.data());
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(back[i], grid[i]) << i;

  for (auto& v : random) v = normal(rng);
  mxfp8_encode_row(random.data(), n, codes.data(), scales.data());
  mxfp8_decode_row(codes.data(), scales.data(), n, back.data());
  for (int64_t i = 0; i < n; ++i) {
    // Half an e4m3 step at the value's binade (3 mantissa bits), or half the smallest subnormal.
    const double scale = e8m0_to_f64(scales[i / 32]);
    const double step =
        std::max(std::ldexp(1.0, std::ilogb(std::fabs(random[i])) - 3), std::ldexp(scale, -9));
    EXPECT_LE(std::fabs(back[i] - random[i]), step / 2 + 1e-12) << i;
  }
  EXPECT_THROW(mxfp8_decode_row(codes.data(), scales.data(), 48, back.data()), Error);
  scales[1] = 0xFF;  // the e8m0 NaN
  mxfp8_decode_row(codes.data(), scales.data(), 64, back.data());
  EXPECT_TRUE(std::isnan(back[40]));
  EXPECT_FALSE(std::isnan(back[10]));
}

}  // namespace
}  // namespace minimax
