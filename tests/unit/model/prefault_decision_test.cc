// Weights larger than the memory available are not read in at load (issue 39 item 2): the
// decision (should_prefault), since this machine's cgroups (v1, shared) cannot be changed by a
// test. The commands pass it cli/kv_memory's available_memory_per_rank.
#include <gtest/gtest.h>

#include "model/model_weights.h"

namespace minimax {
namespace {

TEST(PrefaultDecision, WeightsThatFitAreReadIn) {
  EXPECT_TRUE(should_prefault(100, 1000));
  EXPECT_TRUE(should_prefault(1000, 1000));
}

TEST(PrefaultDecision, WeightsLargerThanTheMemoryAvailableStream) {
  // MiniMax-M2.5 as published (230 GB) under a 192 GiB limit.
  EXPECT_FALSE(should_prefault(230'000'000'000, int64_t{192} << 30));
  EXPECT_FALSE(should_prefault(1001, 1000));
}

TEST(PrefaultDecision, UnknownMemoryReadsIn) { EXPECT_TRUE(should_prefault(uint64_t{1} << 50, 0)); }

}  // namespace
}  // namespace minimax
