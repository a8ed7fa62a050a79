// ModelOptions::huge_page_weights: the bundled model loaded with its weights moved into huge pages
// computes the same logits, bit for bit, as loaded in the checkpoint mapping's pages, and moves
// whole 2 MiB blocks of its 4 MB shard where the kernel offers transparent huge pages.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/huge_pages.h"
#include "model/kv_cache.h"
#include "model/model.h"

namespace minimax {
namespace {

const std::string kBundled = std::string(MINIMAX_TEST_DATA) + "/../../models/minimax-m3-tiny";

std::vector<float> logits_with_weight_pages(bool huge_pages, uint64_t* moved) {
  ModelOptions options;
  options.threads = 2;
  options.huge_page_weights = huge_pages;
  auto model = Model::load(kBundled, options);
  *moved = model->huge_page_weight_bytes();
  std::vector<int32_t> tokens(40), positions(40);
  for (int i = 0; i < 40; ++i) {
    tokens[i] = 3 + (i * 37) % 1000;
    positions[i] = i;
  }
  KvCache cache = model->new_cache(64, KvDtype::kF32);
  return model->forward(tokens, positions, cache, LogitsFor::kAllTokens);
}

TEST(HugePageWeights, SameLogitsAsTheMappedWeights) {
  uint64_t moved_mapped = 0, moved_huge = 0;
  const std::vector<float> mapped = logits_with_weight_pages(false, &moved_mapped);
  const std::vector<float> huge = logits_with_weight_pages(true, &moved_huge);
  EXPECT_EQ(moved_mapped, 0u);
  if (transparent_huge_pages_available()) {
    EXPECT_GE(moved_huge, kHugePageBytes);  // a 4 MB shard holds at least one whole block
  } else {
    EXPECT_EQ(moved_huge, 0u);
  }
  ASSERT_EQ(mapped.size(), huge.size());
  EXPECT_EQ(mapped, huge);
}

}  // namespace
}  // namespace minimax
