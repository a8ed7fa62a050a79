// The forward pass over a paged KV cache: the same bits as over a contiguous cache (tiny M2 and M3,
// both backends, page sizes that are and are not multiples of the CPU attention tile, shuffled
// blocks), the M3 MSA block choice over paged index keys on a prompt long enough for the choice to
// matter, and a second sequence that reuses the first one's prefix blocks (set_length) getting the
// logits of computing the prefix again.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "model/model.h"
#include "tiny_fixture.h"

namespace minimax {
namespace {

using testing_support::iota_positions;

using testing_support::prompt_tokens;

using testing_support::token_range;

// Runs `tokens` through `cache` in the given chunk sizes (all logits of every chunk).
std::vector<float> run_chunks(Model& model, KvCache& cache, const std::vector<int32_t>& tokens,
                              const std::vector<int>& chunks) {
  std::vector<float> all;
  int32_t at = 0;
  for (int n : chunks) {
    const std::vector<int32_t> piece(tokens.begin() + at, tokens.begin() + at + n);
    const auto logits = model.forward(piece, token_range(at, at + n), cache, LogitsFor::kAllTokens);
    all.insert(all.end(), logits.begin(), logits.end());
    at += n;
  }
  return all;
}

// `blocks` distinct blocks of the pool in shuffled order.
std::vector<int32_t> shuffled_table(int64_t pool_blocks, int64_t blocks, uint32_t seed) {
  std::vector<int32_t> ids(pool_blocks);
  std::iota(ids.begin(), ids.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(ids.begin(), ids.end(), rng);
  ids.resize(blocks);
  return ids;
}

using testing_support::same_bits;

struct PagedCase {
  std::string name;
  Arch arch;
  QuantScheme scheme;
  BackendKind backend;
};

class PagedForward : public ::testing::TestWithParam<PagedCase> {};

TEST_P(PagedForward, SameBitsAsTheContiguousCache) {
  const PagedCase& c = GetParam();
  const int vocab = 576;
  ModelOptions options;
  options.backend = c.backend;
  options.threads = 2;
  auto model = Model::load(testing_support::tiny_checkpoint(c.arch, c.scheme, 3, vocab), options);
  const auto tokens = prompt_tokens(40, vocab);
  const std::vector<int> chunks = {23, 7, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};  // prefill, then decode
  KvCache contiguous = model->new_cache(40);
  const auto want = run_chunks(*model, contiguous, tokens, chunks);
  for (int page : {16, 5}) {
    const int64_t blocks = (40 + page - 1) / page;
    auto pool_owner = model->new_kv_pool(3 * blocks, page);
    KvBlockPool& pool = *pool_owner;
    KvCache paged(pool, shuffled_table(pool.num_blocks(), blocks, page));
    EXPECT_TRUE(same_bits(run_chunks(*model, paged, tokens, chunks), want))
        << c.name << ", page size " << page;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Tiny, PagedForward,
    ::testing::Values(
        PagedCase{"m2_bf16_cpu", Arch::kM2, QuantScheme::kNone, BackendKind::kCpu},
        PagedCase{"m2_fp8_block_cpu", Arch::kM2, QuantScheme::kFp8Block, BackendKind::kCpu},
        PagedCase{"m3_mxfp4_cpu", Arch::kM3, QuantScheme::kMxfp4, BackendKind::kCpu},
        PagedCase{"m2_bf16_ref", Arch::kM2, QuantScheme::kNone, BackendKind::kReference},
        PagedCase{"m3_bf16_ref", Arch::kM3, QuantScheme::kNone, BackendKind::kReference}),
    [](const auto& info) { return info.param.name; });

class PagedMsa : public ::testing::TestWithParam<BackendKind> {};

// The m3-bf16-long checkpoint has MSA blocks of 16 slots and top-4: past position 64 the block
// choice leaves blocks out, and it must read the same index keys through the page table.
TEST_P(PagedMsa, BlockChoiceOverPagedIndexKeysMatchesContiguous) {
  const nlohmann::json g = testing_support::load_golden("m3-bf16-long");
  const auto tokens = g.at("tokens").get<std::vector<int32_t>>();
  const int64_t n = static_cast<int64_t>(tokens.size());
  ModelOptions options;
  options.backend = GetParam();
  options.threads = 2;
  auto model = Model::load(testing_support::golden_checkpoint(g), options);
  ASSERT_TRUE(model->config().sparse.enabled);
  ASSERT_GT(n, int64_t{model->config().sparse.topk_blocks} * model->config().sparse.block_size);
  // A prefill chunk crossing the point where blocks are left out, then decodes.
  const std::vector<int> chunks = {50, static_cast<int>(n - 50 - 4), 1, 1, 1, 1};
  KvCache contiguous = model->new_cache(n);
  const auto want = run_chunks(*model, contiguous, tokens, chunks);
  options.dense_attention = true;
  auto dense = Model::load(testing_support::golden_checkpoint(g), options);
  KvCache dense_cache = dense->new_cache(n);
  EXPECT_FALSE(same_bits(run_chunks(*dense, dense_cache, tokens, chunks), want))
      << "the block choice should matter on this prompt";
  for (int page : {16, 24, 7}) {
    const int64_t blocks = (n + page - 1) / page;
    auto pool_owner = model->new_kv_pool(2 * blocks, page);
    KvBlockPool& pool = *pool_owner;
    KvCache paged(pool, shuffled_table(pool.num_blocks(), blocks, 100 + page));
    EXPECT_TRUE(same_bits(run_chunks(*model, paged, tokens, chunks), want)) << "page " << page;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, PagedMsa,
                         ::testing::Values(BackendKind::kCpu, BackendKind::kReference));

TEST(PrefixSharing, SharedPrefixBlocksGiveTheLogitsOfComputingThePrefixAgain) {
  const int vocab = 576;
  for (Arch arch : {Arch::kM2, Arch::kM3}) {
    ModelOptions options;
    options.threads = 2;
    auto model =
        Model::load(testing_support::tiny_checkpoint(arch, QuantScheme::kNone, 3, vocab), options);
    const auto shared = prompt_tokens(32, vocab);  // two whole blocks of 16
    const auto tail_a = prompt_tokens(9, vocab, 5), tail_b = prompt_tokens(9, vocab, 301);
    auto pool_owner = model->new_kv_pool(8, 16);
    KvBlockPool& pool = *pool_owner;
    // Sequence A: the prefix in blocks 6 and 1, its own continuation in block 3.
    KvCache a(pool, {6, 1, 3});
    model->forward(shared, iota_positions(32), a, LogitsFor::kAllTokens);
    model->forward(tail_a, token_range(32, 41), a, LogitsFor::kAllTokens);
    // Sequence B starts on A's prefix blocks (nothing computed), then grows by its own block.
    KvCache b(pool, {6, 1});
    b.set_length(32);
    b.set_block_table({6, 1, 4});
    EXPECT_EQ(b.length(), 32);
    const auto got = model->forward(tail_b, token_range(32, 41), b, LogitsFor::kAllTokens);
    // The same text computed from scratch in its own cache.
    KvCache fresh = model->new_cache(41);
    model->forward(shared, iota_positions(32), fresh, LogitsFor::kAllTokens);
    const auto want = model->forward(tail_b, token_range(32, 41), fresh, LogitsFor::kAllTokens);
    EXPECT_TRUE(same_bits(got, want)) << arch_name(arch);
    // And A's continuation did not disturb B's blocks: a B decode matches too.
    const std::vector<int32_t> next = {7};
    const std::vector<int32_t> at = {41};
    b.set_block_table({6, 1, 4, 5});
    fresh = model->new_cache(42);
    model->forward(shared, iota_positions(32), fresh, LogitsFor::kAllTokens);
    model->forward(tail_b, token_range(32, 41), fresh, LogitsFor::kAllTokens);
    EXPECT_TRUE(same_bits(model->forward(next, at, b), model->forward(next, at, fresh)))
        << arch_name(arch);
  }
}

}  // namespace
}  // namespace minimax
