// BlockManager: reference counts, the prefix-cache hash chain, LRU reuse of cached blocks and
// no leaks.
#include "runtime/block_manager.h"

#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "base/error.h"

namespace minimax {
namespace {

std::vector<int32_t> iota_tokens(int n, int start = 0) {
  std::vector<int32_t> tokens(n);
  std::iota(tokens.begin(), tokens.end(), start);
  return tokens;
}

// Takes blocks for `tokens` as a sequence would and registers its full blocks.
std::vector<int32_t> fill(BlockManager& m, std::span<const int32_t> tokens) {
  std::vector<int32_t> blocks;
  const int64_t size = m.block_size();
  uint64_t parent = 0;
  for (int64_t begin = 0; begin < static_cast<int64_t>(tokens.size()); begin += size) {
    blocks.push_back(*m.allocate());
    if (begin + size <= static_cast<int64_t>(tokens.size())) {
      const auto block_tokens = tokens.subspan(begin, size);
      const uint64_t hash = BlockManager::chain_hash(parent, block_tokens);
      m.register_full(blocks.back(), hash, parent, block_tokens);
      parent = hash;
    }
  }
  return blocks;
}

TEST(BlockManager, AllocatesEveryBlockOnceThenNone) {
  BlockManager m(5, 4, true);
  std::set<int32_t> seen;
  for (int i = 0; i < 5; ++i) {
    const std::optional<int32_t> block = m.allocate();
    ASSERT_TRUE(block.has_value());
    EXPECT_TRUE(seen.insert(*block).second);
    EXPECT_EQ(m.ref_count(*block), 1);
  }
  EXPECT_EQ(m.num_free(), 0);
  EXPECT_EQ(m.num_used(), 5);
  EXPECT_FALSE(m.allocate().has_value());
}

TEST(BlockManager, ReferenceCountsAndDoubleReleaseError) {
  BlockManager m(3, 4, false);
  const int32_t b = *m.allocate();
  EXPECT_FALSE(m.is_cached(b));
  m.retain(b);  // a held block can be shared
  EXPECT_EQ(m.ref_count(b), 2);
  m.release(b);
  EXPECT_EQ(m.ref_count(b), 1);
  EXPECT_EQ(m.num_used(), 1);
  m.release(b);
  EXPECT_EQ(m.ref_count(b), 0);
  EXPECT_EQ(m.num_free(), 3);
  EXPECT_THROW(m.release(b), Error);
  EXPECT_THROW(m.retain(b), Error);  // free and not cached: nothing to share
  EXPECT_THROW(m.release(7), Error);
}

TEST(BlockManager, HashChainFindsLongestPrefixOfFullBlocks) {
  BlockManager m(16, 4, true);
  const std::vector<int32_t> a = iota_tokens(10);  // 2 full blocks + 2 tokens
  const std::vector<int32_t> blocks = fill(m, a);
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_TRUE(m.is_cached(blocks[0]));
  EXPECT_TRUE(m.is_cached(blocks[1]));
  EXPECT_FALSE(m.is_cached(blocks[2]));  // partial blocks are never cached

  // Same first 9 tokens: both full blocks match.
  std::vector<int32_t> b = iota_tokens(9);
  EXPECT_EQ(m.match_prefix(b, 100), std::vector<int32_t>(blocks.begin(), blocks.begin() + 2));
  // The limit counts whole blocks only.
  EXPECT_EQ(m.match_prefix(b, 7), std::vector<int32_t>{blocks[0]});
  EXPECT_TRUE(m.match_prefix(b, 3).empty());
  // A difference in the second block stops the chain after the first.
  b[5] = 99;
  EXPECT_EQ(m.match_prefix(b, 100), std::vector<int32_t>{blocks[0]});
  // The same second block after a different first one is a different chain.
  std::vector<int32_t> c = iota_tokens(8);
  c[0] = 42;
  EXPECT_TRUE(m.match_prefix(c, 100).empty());
  EXPECT_NE(BlockManager::chain_hash(0, std::span(a).subspan(4, 4)),
            BlockManager::chain_hash(BlockManager::chain_hash(0, std::span(a).subspan(0, 4)),
                                     std::span(a).subspan(4, 4)));
}

TEST(BlockManager, WithoutPrefixCachingNothingMatches) {
  BlockManager m(8, 4, false);
  const std::vector<int32_t> a = iota_tokens(8);
  fill(m, a);
  EXPECT_TRUE(m.match_prefix(a, 100).empty());
}

TEST(BlockManager, ReleasedCachedBlocksStayFindableAndAreRetainedFromTheEvictor) {
  BlockManager m(4, 4, true);
  const std::vector<int32_t> a = iota_tokens(8);
  const std::vector<int32_t> blocks = fill(m, a);
  m.release_all(blocks);
  EXPECT_EQ(m.num_used(), 0);
  EXPECT_EQ(m.num_free(), 4);
  const std::vector<int32_t> hits = m.match_prefix(a, 8);
  ASSERT_EQ(hits, blocks);
  EXPECT_EQ(m.count_evictable(hits), 2);
  for (int32_t b : hits) m.retain(b);
  EXPECT_EQ(m.count_evictable(hits), 0);
  EXPECT_EQ(m.num_used(), 2);
  EXPECT_EQ(m.num_free(), 2);
  m.release_all(hits);
  EXPECT_EQ(m.num_free(), 4);
}

TEST(BlockManager, FreeListBeforeEvictionAndEvictionInLruOrder) {
  BlockManager m(4, 2, true);
  const std::vector<int32_t> first = fill(m, iota_tokens(2, 100));   // 1 cached block
  const std::vector<int32_t> second = fill(m, iota_tokens(2, 200));  // 1 cached block
  m.release_all(first);                                              // evictor: first
  m.release_all(second);                                             // evictor: first, second
  // Two never-used blocks are handed out before any cached one is given up.
  const int32_t x = *m.allocate();
  const int32_t y = *m.allocate();
  EXPECT_NE(x, first[0]);
  EXPECT_NE(y, second[0]);
  EXPECT_EQ(m.match_prefix(iota_tokens(2, 100), 2), first);
  EXPECT_EQ(m.match_prefix(iota_tokens(2, 200), 2), second);
  // Then the least recently released cached block goes, and its hash with it.
  EXPECT_EQ(*m.allocate(), first[0]);
  EXPECT_FALSE(m.is_cached(first[0]));
  EXPECT_TRUE(m.match_prefix(iota_tokens(2, 100), 2).empty());
  EXPECT_EQ(m.match_prefix(iota_tokens(2, 200), 2), second);
  EXPECT_EQ(*m.allocate(), second[0]);
  EXPECT_FALSE(m.allocate().has_value());
}

TEST(BlockManager, ReleaseAllGivesUpTheTailBeforeTheHead) {
  BlockManager m(3, 2, true);
  const std::vector<int32_t> blocks = fill(m, iota_tokens(6));
  m.release_all(blocks);
  EXPECT_EQ(*m.allocate(), blocks[2]);  // the tail is evicted first
  EXPECT_EQ(m.match_prefix(iota_tokens(6), 6),
            std::vector<int32_t>(blocks.begin(), blocks.begin() + 2));
}

TEST(BlockManager, DuplicateContentKeepsTheFirstCopy) {
  BlockManager m(4, 2, true);
  const std::vector<int32_t> a = fill(m, iota_tokens(2));
  const std::vector<int32_t> b = fill(m, iota_tokens(2));  // computed again elsewhere
  EXPECT_TRUE(m.is_cached(a[0]));
  EXPECT_FALSE(m.is_cached(b[0]));
  m.release_all(b);  // the uncached copy goes straight back to the free list
  EXPECT_EQ(m.match_prefix(iota_tokens(2), 2), a);
  m.release_all(a);
  EXPECT_EQ(m.num_free(), 4);
}

TEST(BlockManager, ManyRandomSequencesLeaveNothingHeld) {
  BlockManager m(32, 4, true);
  uint64_t state = 12345;
  auto next = [&](int bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((state >> 33) % bound);
  };
  std::vector<std::vector<int32_t>> held;
  for (int round = 0; round < 200; ++round) {
    if (!held.empty() && (next(2) == 0 || m.num_free() < 8)) {
      const size_t victim = next(static_cast<int>(held.size()));
      m.release_all(held[victim]);
      held.erase(held.begin() + victim);
      continue;
    }
    std::vector<int32_t> tokens(4 + next(20));
    for (auto& t : tokens) t = next(3);  // small alphabet: many shared prefixes
    std::vector<int32_t> blocks = m.match_prefix(tokens, static_cast<int64_t>(tokens.size()) - 1);
    for (int32_t b : blocks) m.retain(b);
    while (static_cast<int64_t>(blocks.size()) * 4 < static_cast<int64_t>(tokens.size()))
      blocks.push_back(*m.allocate());
    uint64_t parent = 0;
    for (size_t b = 0; (b + 1) * 4 <= tokens.size(); ++b) {
      const auto block_tokens = std::span<const int32_t>(tokens).subspan(b * 4, 4);
      const uint64_t hash = BlockManager::chain_hash(parent, block_tokens);
      m.register_full(blocks[b], hash, parent, block_tokens);
      parent = hash;
    }
    held.push_back(std::move(blocks));
  }
  for (const auto& blocks : held) m.release_all(blocks);
  EXPECT_EQ(m.num_used(), 0);
  EXPECT_EQ(m.num_free(), 32);
  for (int32_t b = 0; b < 32; ++b) EXPECT_EQ(m.ref_count(b), 0);
}

}  // namespace
}  // namespace minimax
