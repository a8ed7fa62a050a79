// The mode selector and a rank's plan (parallel/parallel_mode.h): vLLM's flags select the mode,
// each rank gets its heads, KV heads (copied when ranks outnumber them) and experts, and a layout
// that does not fit the model or the launch is refused naming the flag and the sizes.
#include "parallel/parallel_mode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"

namespace minimax {
namespace {

ModelConfig model(int heads, int kv_heads, int experts) {
  ModelConfig c;
  c.num_heads = heads;
  c.num_kv_heads = kv_heads;
  c.head_dim = 128;
  c.num_experts = experts;
  c.intermediate_size = 1536;
  return c;
}

void expect_error(const std::function<void()>& f, const std::string& part) {
  try {
    f();
    FAIL() << "no error; wanted one mentioning '" << part << "'";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr(part));
  }
}

TEST(ParallelMode, FlagsSelectTheMode) {
  EXPECT_EQ(select_parallel_mode({}), ParallelMode::kSingle);
  EXPECT_EQ(select_parallel_mode({.tensor_parallel = 2}), ParallelMode::kTpTp);
  EXPECT_EQ(select_parallel_mode({.tensor_parallel = 2, .expert_parallel = true}),
            ParallelMode::kTpEp);
  EXPECT_EQ(select_parallel_mode({.data_parallel = 4, .expert_parallel = true}),
            ParallelMode::kDpEp);
  expect_error([] { select_parallel_mode({.data_parallel = 2}); }, "--enable-expert-parallel");
  expect_error([] { select_parallel_mode({.tensor_parallel = 2, .data_parallel = 2}); },
               "not supported");
}

TEST(ParallelMode, TpRanksHoldTheirHeadsAndExperts) {
  const ModelConfig m2 = model(48, 8, 256);  // MiniMax-M2's attention and experts
  const ParallelPlan p =
      make_parallel_plan({.tensor_parallel = 8, .expert_parallel = true}, 8, 3, m2);
  EXPECT_EQ(p.mode, ParallelMode::kTpEp);
  EXPECT_EQ(p.heads, 6);
  EXPECT_EQ(p.head_begin, 18);
  EXPECT_EQ(p.kv_heads, 1);
  EXPECT_EQ(p.kv_head_begin, 3);
  EXPECT_EQ(p.kv_copies, 1);
  EXPECT_EQ(p.expert_begin, 96);
  EXPECT_EQ(p.expert_end, 128);
  const ModelConfig local = local_model_config(m2, p);
  EXPECT_EQ(local.num_heads, 6);
  EXPECT_EQ(local.intermediate_size, 1536);  // whole experts under EP
  const ParallelPlan tp_tp = make_parallel_plan({.tensor_parallel = 8}, 8, 3, m2);
  EXPECT_TRUE(tp_tp.holds_expert(0) && tp_tp.holds_expert(255));
  EXPECT_EQ(local_model_config(m2, tp_tp).intermediate_size, 192);
}

TEST(ParallelMode, MoreRanksThanKvHeadsCopyThem) {
  const ModelConfig m3 = model(64, 4, 256);  // M3's 4 KV heads at T = 8
  for (int rank = 0; rank < 8; ++rank) {
    const ParallelPlan p = make_parallel_plan({.tensor_parallel = 8}, 8, rank, m3);
    EXPECT_EQ(p.kv_heads, 1);
    EXPECT_EQ(p.kv_copies, 2);
    // Query heads [8r, 8r + 8) read KV head (8r) / 16 = r / 2.
    EXPECT_EQ(p.kv_head_begin, rank / 2) << rank;
    EXPECT_EQ(p.head_begin * m3.num_kv_heads / m3.num_heads, p.kv_head_begin) << rank;
  }
}

TEST(ParallelMode, LayoutsThatDoNotFitAreRefused) {
  const ModelConfig m2 = model(48, 8, 256);
  expect_error([&] { make_parallel_plan({.tensor_parallel = 2}, 4, 0, m2); },
               "2 ranks, but 4 were started");
  expect_error([&] { make_parallel_plan({.tensor_parallel = 5}, 5, 0, m2); },
               "48 attention heads do not divide among 5 ranks");
  expect_error([&] { make_parallel_plan({.tensor_parallel = 3}, 3, 0, model(48, 8, 255)); },
               "KV heads");
  expect_error([&] { make_parallel_plan({.data_parallel = 3, .expert_parallel = true}, 3, 0, m2); },
               "256 experts do not divide among 3 ranks");
  ModelConfig wide = model(64, 8, 256);
  wide.intermediate_size = 1000;
  expect_error([&] { make_parallel_plan({.tensor_parallel = 16}, 16, 0, wide); },
               "expert width (intermediate_size) 1000 does not divide among 16 ranks");
}

}  // namespace
}  // namespace minimax
