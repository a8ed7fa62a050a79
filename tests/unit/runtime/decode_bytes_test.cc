// Active weight bytes per decoded token: per-format byte counts and the tiny M2 model's total,
// hand-computed from its shapes (bf16, and fp8-channel whose routed experts are FP8).
#include "runtime/decode_bytes.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "checkpoint/quantize.h"
#include "model/model.h"
#include "runtime_fixture.h"

namespace minimax {
namespace {

WeightView view(WeightFormat format, int64_t rows, int64_t cols) {
  WeightView w;
  w.format = format;
  w.rows = rows;
  w.cols = cols;
  return w;
}

TEST(DecodeBytesTest, BytesOfEachWeightFormat) {
  EXPECT_EQ(weight_view_bytes(view(WeightFormat::kF32, 2, 3)), 24u);
  EXPECT_EQ(weight_view_bytes(view(WeightFormat::kBF16, 3, 64)), 384u);
  // 200 × 300 codes + f32 scales over ceil(200/128) × ceil(300/128) = 2 × 3 tiles.
  EXPECT_EQ(weight_view_bytes(view(WeightFormat::kFp8Block, 200, 300)), 60000u + 24u);
  EXPECT_EQ(weight_view_bytes(view(WeightFormat::kFp8Channel, 10, 32)), 320u + 40u);
  // Packed nibbles + one e8m0 per 32 (MXFP4) / one e4m3 per 16 and the f32 global (NVFP4).
  EXPECT_EQ(weight_view_bytes(view(WeightFormat::kMxfp4, 4, 64)), 128u + 8u);
  EXPECT_EQ(weight_view_bytes(view(WeightFormat::kNvfp4, 4, 64)), 128u + 16u + 4u);
}

// Tiny M2 (checkpoint/tiny_config.h): 3 layers, hidden 64, q 8×16, kv 2×16, 16 experts of width 32,
// top-4, f32 router and norms.
TEST(DecodeBytesTest, TinyM2Bf16ByHand) {
  ModelOptions options;
  options.threads = 1;
  auto model = Model::load(runtime_test::tiny_model_dir(Arch::kM2), options);
  const DecodeBytes b = decode_bytes_per_token(model->weights(), model->config());
  // q [128,64] + k [32,64] + v [32,64] + o [64,128] in bf16, q/k norms [128] + [32] in f32.
  EXPECT_EQ(b.attention, 3u * ((128 * 64 + 32 * 64 + 32 * 64 + 64 * 128) * 2 + (128 + 32) * 4));
  EXPECT_EQ(b.router, 3u * (16 * 64 * 4 + 16 * 4));
  EXPECT_EQ(b.routed_experts, 3u * 4 * (3 * 32 * 64 * 2));
  EXPECT_EQ(b.shared_expert, 0u);
  EXPECT_EQ(b.dense_ffn, 0u);
  EXPECT_EQ(b.norms, 3u * 2 * 64 * 4 + 64 * 4);
  EXPECT_EQ(b.embedding_row, 64u * 2);
  const uint64_t vocab = model->config().vocab_size;
  EXPECT_EQ(b.lm_head, vocab * 64 * 2);
  EXPECT_EQ(b.total(),
            b.attention + b.router + b.routed_experts + b.norms + b.embedding_row + b.lm_head);
}

TEST(DecodeBytesTest, Fp8ChannelExpertsCountOneBytePerWeightPlusRowScales) {
  const std::string dir = runtime_test::scratch_path("fp8");
  quantize_checkpoint(
      QuantizeOptions{runtime_test::tiny_model_dir(Arch::kM2), dir, QuantScheme::kFp8Channel});
  ModelOptions options;
  options.threads = 1;
  auto model = Model::load(dir, options);
  const DecodeBytes b = decode_bytes_per_token(model->weights(), model->config());
  // gate and up [32, 64], down [64, 32]: codes + one f32 scale per row.
  EXPECT_EQ(b.routed_experts, 3u * 4 * (2 * (32 * 64 + 32 * 4) + (64 * 32 + 64 * 4)));
  // The dequant path decodes experts to bf16 at load: 2 bytes per weight.
  options.moe_path = MoePath::kDequant;
  auto dequant = Model::load(dir, options);
  EXPECT_EQ(decode_bytes_per_token(dequant->weights(), dequant->config()).routed_experts,
            3u * 4 * (3 * 32 * 64 * 2));
}

TEST(DecodeBytesTest, DistinctExpertsOfSeveralStreams) {
  EXPECT_DOUBLE_EQ(expected_distinct_experts(64, 8, 0), 0.0);
  EXPECT_DOUBLE_EQ(expected_distinct_experts(64, 8, 1), 8.0);
  // Two tokens: 8 + 8 · (56/64) expected, the second token's picks outside the first's.
  EXPECT_DOUBLE_EQ(expected_distinct_experts(64, 8, 2), 8.0 + 8.0 * 56.0 / 64.0);
  EXPECT_NEAR(expected_distinct_experts(64, 8, 8), 42.01, 0.01);  // docs/runtime.md's 42
  EXPECT_NEAR(expected_distinct_experts(256, 8, 1000), 256.0, 1e-9);
  EXPECT_DOUBLE_EQ(expected_distinct_experts(4, 4, 3), 4.0);
  EXPECT_THROW(expected_distinct_experts(8, 9, 1), Error);
  EXPECT_THROW(expected_distinct_experts(0, 1, 1), Error);
}

TEST(DecodeBytesTest, StepBytesReadSharedWeightsOnceAndTheUnionOfExperts) {
  DecodeBytes b;
  b.attention = 1000;
  b.router = 10;
  b.routed_experts = 800;  // top-8 of 64: 100 bytes per expert (all layers together)
  b.norms = 5;
  b.embedding_row = 3;
  b.lm_head = 2000;
  EXPECT_DOUBLE_EQ(step_weight_bytes(b, 64, 8, 1), static_cast<double>(b.total()));
  // Two streams: shared parts once, two embedding rows, 8 + 7 experts of 100 bytes.
  EXPECT_DOUBLE_EQ(step_weight_bytes(b, 64, 8, 2), 1000 + 10 + 5 + 2000 + 2 * 3 + 1500.0);
  b.routed_experts = 0;  // no MoE layers: the experts add nothing, whatever the routing fields
  EXPECT_DOUBLE_EQ(step_weight_bytes(b, 0, 0, 4), 1000 + 10 + 5 + 2000 + 4 * 3);
}

}  // namespace
}  // namespace minimax
