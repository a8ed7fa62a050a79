// Reference linear and embedding: a hand-computed case, and every weight format against a naive
// product of the weight decoded with the formats/ codecs (odd shapes, partial FP8 tiles, threads).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/error.h"
#include "formats/float_formats.h"
#include "formats/microscaling.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace {

std::vector<uint8_t> bf16_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> out(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t b = f32_to_bf16(values[i]);
    std::memcpy(out.data() + 2 * i, &b, 2);
  }
  return out;
}

TEST(ReferenceLinear, HandComputedBf16) {
  const auto bytes = bf16_bytes({1, 2, 3, 4, 5, 6});  // W = [[1,2,3],[4,5,6]]
  WeightView w;
  w.format = WeightFormat::kBF16;
  w.rows = 2;
  w.cols = 3;
  w.data = bytes.data();
  const std::vector<float> x = {1, 0.5f, -1, 0, 0, 2};  // two tokens
  std::vector<float> y(4);
  reference::linear(w, x.data(), 2, y.data(), nullptr);
  EXPECT_EQ(y, (std::vector<float>{-1, 0.5f, 6, 12}));
}

// A random [rows, cols] weight stored in `format`, with the exact value of every element computed
// here from the codecs of formats/ (not from the reference's row decoder).
struct TestWeight {
  std::vector<uint8_t> data;
  std::vector<float> f32_scales;
  std::vector<uint8_t> code_scales;
  std::vector<double> exact;  // [rows, cols]
  WeightView view;
};

TestWeight make_reference_weight(WeightFormat format, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(rows * cols);
  for (float& v : values) v = normal(rng);
  TestWeight t;
  t.exact.resize(rows * cols);
  WeightView& w = t.view;
  w.format = format;
  w.rows = rows;
  w.cols = cols;
  switch (format) {
    case WeightFormat::kF32:
      t.data.resize(values.size() * 4);
      std::memcpy(t.data.data(), values.data(), t.data.size());
      for (size_t i = 0; i < values.size(); ++i) t.exact[i] = values[i];
      break;
    case WeightFormat::kBF16:
      t.data = bf16_bytes(values);
      for (size_t i = 0; i < values.size(); ++i) t.exact[i] = bf16_to_f32(f32_to_bf16(values[i]));
      break;
    case WeightFormat::kFp8Block: {
      w.block_rows = 16;  // rows = 37: a partial last tile row
      w.block_cols = 32;
      const int64_t sr = (rows + 15) / 16, sc = (cols + 31) / 32;
      t.f32_scales.resize(sr * sc);
      for (size_t i = 0; i < t.f32_scales.size(); ++i) t.f32_scales[i] = 0.01f * (1 + i % 7);
      t.data.resize(rows * cols);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          const float s = t.f32_scales[(r / 16) * sc + c / 32];
          const uint8_t code = f64_to_fp8(values[r * cols + c] / s, Fp8Format::kE4M3FN);
          t.data[r * cols + c] = code;
          t.exact[r * cols + c] = fp8_to_f64(code, Fp8Format::kE4M3FN) * s;
        }
      break;
    }
    case WeightFormat::kFp8Channel:
      t.f32_scales.resize(rows);
      t.data.resize(rows * cols);
      for (int64_t r = 0; r < rows; ++r) {
        t.f32_scales[r] = 0.003f * (r + 1);
        for (int64_t c = 0; c < cols; ++c) {
          const uint8_t code =
              f64_to_fp8(values[r * cols + c] / t.f32_scales[r], Fp8Format::kE4M3FN);
          t.data[r * cols + c] = code;
          t.exact[r * cols + c] = fp8_to_f64(code, Fp8Format::kE4M3FN) * t.f32_scales[r];
        }
      }
      break;
    case WeightFormat::kMxfp4:
      t.data.resize(rows * cols / 2);
      t.code_scales.resize(rows * cols / 32);
      for (int64_t r = 0; r < rows; ++r) {
        mxfp4_encode_row(values.data() + r * cols, cols, t.data.data() + r * cols / 2,
                         t.code_scales.data() + r * cols / 32);
        std::vector<float> decoded(cols);
        mxfp4_decode_row(t.data.data() + r * cols / 2, t.code_scales.data() + r * cols / 32, cols,
                         decoded.data());
        for (int64_t c = 0; c < cols; ++c) t.exact[r * cols + c] = decoded[c];
      }
      break;
    case WeightFormat::kMxfp8:
      t.data.resize(rows * cols);
      t.code_scales.resize(rows * cols / 32);
      for (int64_t r = 0; r < rows; ++r) {
        mxfp8_encode_row(values.data() + r * cols, cols, t.data.data() + r * cols,
                         t.code_scales.data() + r * cols / 32);
        std::vector<float> decoded(cols);
        mxfp8_decode_row(t.data.data() + r * cols, t.code_scales.data() + r * cols / 32, cols,
                         decoded.data());
        for (int64_t c = 0; c < cols; ++c) t.exact[r * cols + c] = decoded[c];
      }
      break;
    case WeightFormat::kNvfp4: {
      w.global_scale = 0.0017f;
      t.data.resize(rows * cols / 2);
      t.code_scales.resize(rows * cols / 16);
      for (int64_t r = 0; r < rows; ++r) {
        nvfp4_encode_row(values.data() + r * cols, cols, w.global_scale,
                         t.data.data() + r * cols / 2, t.code_scales.data() + r * cols / 16);
        std::vector<float> decoded(cols);
        nvfp4_decode_row(t.data.data() + r * cols / 2, t.code_scales.data() + r * cols / 16,
                         w.global_scale, cols, decoded.data());
        for (int64_t c = 0; c < cols; ++c) t.exact[r * cols + c] = decoded[c];
      }
      break;
    }
  }
  w.data = t.data.data();
  w.scales = t.f32_scales.empty() ? static_cast<const void*>(t.code_scales.data())
                                  : static_cast<const void*>(t.f32_scales.data());
  return t;
}

class ReferenceLinearFormats : public ::testing::TestWithParam<WeightFormat> {};

TEST_P(ReferenceLinearFormats, MatchesNaiveProductOfDecodedWeight) {
  const int64_t rows = 37, cols = 160, T = 3;
  TestWeight w = make_reference_weight(GetParam(), rows, cols, 11);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(T * cols);
  for (float& v : x) v = normal(rng);
  std::vector<float> y(T * rows), y_threads(T * rows);
  reference::linear(w.view, x.data(), T, y.data(), nullptr);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t r = 0; r < rows; ++r) {
      double expected = 0;
      for (int64_t c = 0; c < cols; ++c) expected += w.exact[r * cols + c] * x[t * cols + c];
      // MXFP4/NVFP4 decode through f32 in formats/ (exact for these values); the sum is double.
      EXPECT_NEAR(y[t * rows + r], expected, 1e-5 * (1 + std::fabs(expected)))
          << "token " << t << " row " << r;
    }
  ThreadPool pool(3);
  reference::linear(w.view, x.data(), T, y_threads.data(), &pool);
  EXPECT_EQ(y, y_threads);  // rows are independent: the split does not change a bit
}

INSTANTIATE_TEST_SUITE_P(EveryFormat, ReferenceLinearFormats,
                         ::testing::Values(WeightFormat::kF32, WeightFormat::kBF16,
                                           WeightFormat::kFp8Block, WeightFormat::kFp8Channel,
                                           WeightFormat::kMxfp4, WeightFormat::kNvfp4,
                                           WeightFormat::kMxfp8));

TEST(ReferenceLinear, RejectsUnusableViews) {
  WeightView w;
  w.format = WeightFormat::kFp8Channel;
  w.rows = 2;
  w.cols = 4;
  std::vector<uint8_t> codes(8, 0x38);
  w.data = codes.data();
  float x[4] = {}, y[2];
  EXPECT_THROW(reference::linear(w, x, 1, y, nullptr), Error);  // no scales
  w.format = WeightFormat::kMxfp4;
  w.scales = codes.data();
  EXPECT_THROW(reference::linear(w, x, 1, y, nullptr), Error);  // 4 is not a multiple of 32
}

TEST(ReferenceEmbedding, DecodesRowsAndNamesBadTokens) {
  TestWeight table = make_reference_weight(WeightFormat::kBF16, 5, 8, 3);
  const int32_t tokens[2] = {4, 1};
  std::vector<float> out(16);
  reference::embedding(table.view, tokens, 2, out.data());
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(out[c], table.exact[4 * 8 + c]);
    EXPECT_EQ(out[8 + c], table.exact[1 * 8 + c]);
  }
  const int32_t bad[1] = {5};
  try {
    reference::embedding(table.view, bad, 1, out.data());
    FAIL() << "token 5 of a 5-row table accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("token id 5"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace minimax
