// Reference RMSNorm (plain, Gemma, whole-projection versus per-head use) and NeoX partial RoPE,
// against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/error.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace {

TEST(ReferenceRmsNorm, HandComputedPlainAndGemma) {
  const std::vector<float> x = {3, 4};
  const double rms = std::sqrt((9.0 + 16.0) / 2.0);
  std::vector<float> out(2);
  const float plain_w[2] = {1, 2};
  reference::rms_norm(x.data(), 1, 2, plain_w, 0.0f, false, out.data(), nullptr);
  EXPECT_FLOAT_EQ(out[0], 3 / rms);
  EXPECT_FLOAT_EQ(out[1], 8 / rms);
  // Gemma applies (1 + w): zero-centred weights {0, 1} are the plain weights {1, 2}.
  const float gemma_w[2] = {0, 1};
  std::vector<float> gemma(2);
  reference::rms_norm(x.data(), 1, 2, gemma_w, 0.0f, true, gemma.data(), nullptr);
  EXPECT_EQ(gemma, out);
  // eps inside the root: x = 0 gives 0, not NaN.
  const float zeros[2] = {0, 0};
  reference::rms_norm(zeros, 1, 2, plain_w, 1e-6f, false, out.data(), nullptr);
  EXPECT_EQ(out, (std::vector<float>{0, 0}));
}

TEST(ReferenceRmsNorm, WholeProjectionDiffersFromPerHead) {
  // Two heads of 2 with different scales. M2 normalises the 4 values together (one RMS), M3 each
  // head alone: the second head comes out 10x larger under the first and equal under the second.
  const std::vector<float> q = {1, 1, 10, 10};
  const std::vector<float> ones = {1, 1, 1, 1};
  std::vector<float> whole(4), per_head(4);
  reference::rms_norm(q.data(), 1, 4, ones.data(), 0.0f, false, whole.data(), nullptr);
  reference::rms_norm(q.data(), 2, 2, ones.data(), 0.0f, false, per_head.data(), nullptr);
  EXPECT_NEAR(whole[2] / whole[0], 10.0, 1e-5);
  EXPECT_FLOAT_EQ(per_head[0], 1.0f);
  EXPECT_FLOAT_EQ(per_head[2], 1.0f);
}

TEST(ReferenceRope, AngleUsesRotaryDimAndF32Product) {
  // inv_freq[i] = theta^(-2i/rotary_dim): with rotary_dim 4 and theta 10000, pair 1 turns at 0.01
  // per position (normalising by a head_dim of 8 would give 0.1).
  EXPECT_EQ(reference::rope_angle(7, 0, 4, 10000.0), 7.0f);
  EXPECT_EQ(reference::rope_angle(3, 1, 4, 10000.0), 3.0f * 0.01f);
  // The product is rounded to f32, as HF / vLLM form it.
  const float inv = 1.0f / static_cast<float>(std::pow(5e6, 2.0 / 8.0));
  EXPECT_EQ(reference::rope_angle(123457, 1, 8, 5e6), 123457.0f * inv);
}

TEST(ReferenceRope, RotatesHalfPairsOfTheRotaryDimsOnly) {
  // head_dim 6, rotary_dim 4: pairs (0,2) and (1,3) rotate (NeoX), dims 4 and 5 pass through.
  const RopeParams p{2, 6, 4, 10000.0};
  std::vector<float> x = {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6};  // one token, two heads
  const std::vector<float> original = x;
  const int32_t pos[1] = {5};
  reference::rope(x.data(), 1, pos, p, nullptr);
  const double a0 = 5.0, a1 = static_cast<double>(5.0f * 0.01f);
  for (int h = 0; h < 2; ++h) {
    const float* in = original.data() + 6 * h;
    const float* out = x.data() + 6 * h;
    EXPECT_NEAR(out[0], in[0] * std::cos(a0) - in[2] * std::sin(a0), 1e-6);
    EXPECT_NEAR(out[2], in[2] * std::cos(a0) + in[0] * std::sin(a0), 1e-6);
    EXPECT_NEAR(out[1], in[1] * std::cos(a1) - in[3] * std::sin(a1), 1e-6);
    EXPECT_NEAR(out[3], in[3] * std::cos(a1) + in[1] * std::sin(a1), 1e-6);
    EXPECT_EQ(out[4], in[4]);
    EXPECT_EQ(out[5], in[5]);
  }
}

TEST(ReferenceRope, PositionZeroIsIdentityAndEachTokenUsesItsPosition) {
  const RopeParams p{1, 4, 4, 10000.0};
  std::vector<float> x = {1, 2, 3, 4, 1, 2, 3, 4};  // two tokens, same values
  const int32_t pos[2] = {0, 9};
  reference::rope(x.data(), 2, pos, p, nullptr);
  EXPECT_EQ(std::vector<float>(x.begin(), x.begin() + 4), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_NE(x[4], 1.0f);
  // A rotation keeps each pair's length.
  EXPECT_NEAR(std::hypot(x[4], x[6]), std::hypot(1.0, 3.0), 1e-5);
  EXPECT_NEAR(std::hypot(x[5], x[7]), std::hypot(2.0, 4.0), 1e-5);
}

TEST(ReferenceRope, RejectsRotaryDimBeyondHead) {
  std::vector<float> x(4);
  const int32_t pos[1] = {1};
  EXPECT_THROW(reference::rope(x.data(), 1, pos, RopeParams{1, 4, 6, 1e4}, nullptr), Error);
  EXPECT_THROW(reference::rope(x.data(), 1, pos, RopeParams{1, 4, 3, 1e4}, nullptr), Error);
}

}  // namespace
}  // namespace minimax
