// Reference attention (hand-computed softmax, causality, GQA head mapping, block-restricted
// attention, bit-identity with dense when every block is selected) and MSA block selection (max
// score, forced local block, ties to the lower block, per KV group, dense below top-k blocks).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/error.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace {

// `pos` and the vectors must outlive the returned args.
AttentionArgs args_for(const std::vector<float>& q, const std::vector<float>& k,
                       const std::vector<float>& v, const std::vector<int32_t>& pos, int heads,
                       int kv_heads, int d, std::vector<float>& out) {
  AttentionArgs a;
  a.q = q.data();
  a.T = static_cast<int64_t>(pos.size());
  a.num_heads = heads;
  a.num_kv_heads = kv_heads;
  a.head_dim = d;
  a.k_cache = k.data();
  a.v_cache = v.data();
  a.cache_stride = int64_t(kv_heads) * d;
  a.positions = pos.data();
  a.scale = 1.0f;
  out.assign(a.T * heads * d, 0.0f);
  a.out = out.data();
  return a;
}

TEST(ReferenceAttention, HandComputedSoftmaxAndCausality) {
  // Two cached tokens; q = (1, 0) scores 1 against k0 = (1, 0) and 0 against k1 = (0, 1).
  const std::vector<float> k = {1, 0, 0, 1}, v = {1, 2, 3, 4};
  const std::vector<float> q = {1, 0, 1, 0};
  std::vector<float> out;
  const std::vector<int32_t> pos = {0, 1};
  AttentionArgs a = args_for(q, k, v, pos, 1, 1, 2, out);
  reference::attention(a, nullptr);
  // Position 0 sees only slot 0.
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 2.0f);
  const double e = std::exp(1.0), p0 = e / (e + 1), p1 = 1 / (e + 1);
  EXPECT_NEAR(out[2], p0 * 1 + p1 * 3, 1e-6);
  EXPECT_NEAR(out[3], p0 * 2 + p1 * 4, 1e-6);
}

TEST(ReferenceAttention, QueryHeadsMapToConsecutiveKvGroups) {
  // 4 query heads, 2 KV heads, one cached token: heads 0-1 read KV head 0, heads 2-3 KV head 1.
  const std::vector<float> k = {0, 0, 0, 0}, v = {10, 11, 20, 21};
  const std::vector<float> q(8, 1.0f);
  std::vector<float> out;
  const std::vector<int32_t> pos = {0};
  AttentionArgs a = args_for(q, k, v, pos, 4, 2, 2, out);
  reference::attention(a, nullptr);
  EXPECT_EQ(out, (std::vector<float>{10, 11, 10, 11, 20, 21, 20, 21}));
}

struct RandomCache {
  int heads = 4, kv = 2, d = 8, slots = 12;
  std::vector<float> q, k, v;
  std::vector<int32_t> pos = {5, 9, 11};
  explicit RandomCache(uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> n(0, 1);
    q.resize(pos.size() * heads * d);
    k.resize(slots * kv * d);
    v.resize(slots * kv * d);
    for (auto* vec : {&q, &k, &v})
      for (float& x : *vec) x = n(rng);
  }
};

TEST(ReferenceAttention, AllBlocksSelectedIsBitIdenticalToDense) {
  RandomCache c(3);
  std::vector<float> dense, sparse;
  AttentionArgs a = args_for(c.q, c.k, c.v, c.pos, c.heads, c.kv, c.d, dense);
  reference::attention(a, nullptr);
  // Block size 4: positions 5, 9, 11 see 2, 3, 3 blocks; select all of them (top 4, -1 padded).
  std::vector<int32_t> blocks = {0, 1, -1, -1, 0, 1, -1, -1, 0, 1, 2, -1,
                                 0, 1, 2,  -1, 0, 1, 2,  -1, 0, 1, 2, -1};
  AttentionArgs b = args_for(c.q, c.k, c.v, c.pos, c.heads, c.kv, c.d, sparse);
  b.block_ids = blocks.data();
  b.max_blocks = 4;
  b.block_size = 4;
  reference::attention(b, nullptr);
  ASSERT_EQ(dense.size(), sparse.size());
  EXPECT_EQ(std::memcmp(dense.data(), sparse.data(), dense.size() * 4), 0);
}

TEST(ReferenceAttention, SelectedBlocksRestrictEachKvGroup) {
  RandomCache c(4);
  // Token 2 (position 11): group 0 keeps blocks {0, 2}, group 1 keeps block {2} only.
  std::vector<int32_t> blocks(3 * 2 * 2, -1);
  for (int t = 0; t < 2; ++t)
    for (int g = 0; g < 2; ++g) blocks[(t * 2 + g) * 2] = 0;
  blocks[(2 * 2 + 0) * 2 + 0] = 0;
  blocks[(2 * 2 + 0) * 2 + 1] = 2;
  blocks[(2 * 2 + 1) * 2 + 0] = 2;
  std::vector<float> out;
  AttentionArgs a = args_for(c.q, c.k, c.v, c.pos, c.heads, c.kv, c.d, out);
  a.block_ids = blocks.data();
  a.max_blocks = 2;
  a.block_size = 4;
  reference::attention(a, nullptr);
  // Naive check for token 2: softmax over exactly the allowed slots of each head's group.
  for (int h = 0; h < c.heads; ++h) {
    const int g = h / 2;
    std::vector<int> slots =
        g == 0 ? std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11} : std::vector<int>{8, 9, 10, 11};
    const float* q = c.q.data() + (2 * c.heads + h) * c.d;
    std::vector<double> w;
    double m = -1e300, sum = 0;
    for (int s : slots) {
      double dot = 0;
      for (int i = 0; i < c.d; ++i) dot += q[i] * c.k[(s * c.kv + g) * c.d + i];
      w.push_back(dot);
      m = std::max(m, dot);
    }
    for (double& x : w) sum += (x = std::exp(x - m));
    for (int i = 0; i < c.d; ++i) {
      double expected = 0;
      for (size_t j = 0; j < slots.size(); ++j)
        expected += w[j] / sum * c.v[(slots[j] * c.kv + g) * c.d + i];
      EXPECT_NEAR(out[(2 * c.heads + h) * c.d + i], expected, 1e-5) << "head " << h;
    }
  }
}

// Index keys with chosen per-block scores for a query of all ones (index_dim 1).
struct Selection {
  std::vector<float> index_q, index_k;
  std::vector<int32_t> pos, blocks;
  BlockSelectArgs args(int heads, int block, int topk) {
    BlockSelectArgs a;
    a.index_q = index_q.data();
    a.T = static_cast<int64_t>(pos.size());
    a.num_index_heads = heads;
    a.index_dim = 1;
    a.index_k_cache = index_k.data();
    a.index_k_stride = 1;
    a.positions = pos.data();
    a.block_size = block;
    a.topk_blocks = topk;
    blocks.assign(pos.size() * heads * topk, 99);
    a.block_ids = blocks.data();
    return a;
  }
};

TEST(ReferenceBlockSelect, AllBlocksWhileThereAreAtMostTopK) {
  Selection s{{1, 1}, std::vector<float>(8, 0.0f), {2, 7}, {}};
  reference::select_blocks(s.args(1, 2, 4), nullptr);
  // Position 2: blocks 0-1 of size 2; position 7: blocks 0-3, exactly top-4.
  EXPECT_EQ(s.blocks, (std::vector<int32_t>{0, 1, -1, -1, 0, 1, 2, 3}));
}

TEST(ReferenceBlockSelect, MaxScoreWithForcedLocalBlock) {
  // Position 7, blocks of 2 (0-3), top-2: block 3 is local and forced. The other is chosen by the
  // maximum key score: block 2 has max 2.0 (mean -1.5), block 0 max 0.9 (mean 0.5).
  Selection s{{1}, {0.1f, 0.9f, 0.5f, 0.5f, 2.0f, -5.0f, -9.0f, -9.0f}, {7}, {}};
  reference::select_blocks(s.args(1, 2, 2), nullptr);
  EXPECT_EQ(s.blocks, (std::vector<int32_t>{2, 3}));
}

TEST(ReferenceBlockSelect, TiesGoToTheLowerBlock) {
  Selection s{{1}, {0.7f, 0.0f, 0.7f, 0.0f, 0.7f, 0.0f, 0.0f, 0.0f, 0.0f}, {8}, {}};
  reference::select_blocks(s.args(1, 2, 3), nullptr);  // blocks 0-4, local 4; 0, 1, 2 tie
  EXPECT_EQ(s.blocks, (std::vector<int32_t>{0, 1, 4}));
}

TEST(ReferenceBlockSelect, EachIndexHeadChoosesForItsOwnKvGroup) {
  // One shared index key per slot; head 0's query is +1, head 1's is -1: they prefer opposite
  // blocks.
  Selection s{{1, -1}, {5.0f, 5.0f, -5.0f, -5.0f, 0.0f, 0.0f}, {5}, {}};
  reference::select_blocks(s.args(2, 2, 2), nullptr);
  EXPECT_EQ(s.blocks, (std::vector<int32_t>{0, 2, 1, 2}));
}

TEST(ReferenceBlockSelect, InitialBlocksAreForcedToo) {
  Selection s{{1}, {-9.0f, -9.0f, 1.0f, 1.0f, 3.0f, 3.0f, 0.0f, 0.0f}, {7}, {}};
  BlockSelectArgs a = s.args(1, 2, 2);
  a.init_blocks = 1;
  reference::select_blocks(a, nullptr);
  EXPECT_EQ(s.blocks, (std::vector<int32_t>{0, 3}));
  a.init_blocks = 2;  // 2 initial + 1 local > top-2
  EXPECT_THROW(reference::select_blocks(a, nullptr), Error);
}

}  // namespace
}  // namespace minimax
