// KvBlockPool and KvCache bookkeeping: block sizes in bytes, where a slot lives in a paged cache,
// how set_block_table and set_length change capacity and the filled length, and the errors.
#include "model/kv_cache.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "checkpoint/model_config.h"
#include "tiny_fixture.h"

namespace minimax {
namespace {

ModelConfig config_of(const std::string& golden) {
  return load_model_config(
      testing_support::golden_checkpoint(testing_support::load_golden(golden)));
}

using testing_support::expect_error_mentions;

TEST(KvBlockPool, BytesPerBlockCountKeysValuesAndIndexKeys) {
  const ModelConfig m2 = config_of("m2-bf16");
  const int64_t kv = int64_t(m2.num_kv_heads) * m2.head_dim;
  EXPECT_EQ(KvBlockPool::bytes_per_block(m2, 16), 16 * 2 * kv * m2.num_layers * 4);

  const ModelConfig m3 = config_of("m3-bf16-long");
  ASSERT_TRUE(m3.sparse.enabled);
  int sparse_layers = 0;
  for (int l = 0; l < m3.num_layers; ++l) sparse_layers += m3.is_sparse_layer(l);
  ASSERT_GT(sparse_layers, 0);
  const int64_t kv3 = int64_t(m3.num_kv_heads) * m3.head_dim;
  EXPECT_EQ(KvBlockPool::bytes_per_block(m3, 8),
            8 * 4 * (2 * kv3 * m3.num_layers + int64_t(m3.sparse.index_dim) * sparse_layers));

  auto host = create_backend(BackendKind::kReference);
  KvBlockPool pool(*host, m3, 5, 8);
  EXPECT_EQ(pool.num_blocks(), 5);
  EXPECT_EQ(pool.block_size(), 8);
  EXPECT_EQ(pool.kv_width(), kv3);
  EXPECT_EQ(pool.index_width(), m3.sparse.index_dim);
  EXPECT_EQ(pool.dtype(), KvDtype::kF32);
  EXPECT_EQ(pool.index_k(0), nullptr);  // layer 0 attends densely: no index keys
  expect_error_mentions([&] { KvBlockPool(*host, m3, 0, 8); }, "num_blocks");
  expect_error_mentions([&] { KvBlockPool(*host, m3, 4, 0); }, "block_size");
  // Other element types take their size per element.
  EXPECT_EQ(KvBlockPool::bytes_per_block(m3, 8, KvDtype::kBF16) * 2,
            KvBlockPool::bytes_per_block(m3, 8));
  EXPECT_EQ(KvBlockPool::bytes_per_block(m3, 8, KvDtype::kFp8E4m3) * 4,
            KvBlockPool::bytes_per_block(m3, 8));
}

TEST(KvCache, PagedSlotsLiveInTheirTableBlocks) {
  const ModelConfig m2 = config_of("m2-bf16");
  auto host = create_backend(BackendKind::kReference);
  KvBlockPool pool(*host, m2, 6, 4);
  KvCache cache(pool, {5, 2, 0});
  EXPECT_EQ(cache.capacity(), 12);
  EXPECT_EQ(cache.page_size(), 4);
  EXPECT_EQ(cache.storage_row(0), 20);
  EXPECT_EQ(cache.storage_row(3), 23);
  EXPECT_EQ(cache.storage_row(4), 8);
  EXPECT_EQ(cache.storage_row(11), 3);
  EXPECT_EQ(cache.k(1), pool.k(1));
  EXPECT_EQ(cache.v(0), pool.v(0));
  expect_error_mentions([&] { cache.check_position(12); }, "position 12");

  // A single-sequence cache owns a pool of one block: slot s is row s.
  KvCache own(std::make_unique<KvBlockPool>(*host, m2, 1, 7));
  EXPECT_EQ(own.capacity(), 7);
  EXPECT_EQ(own.block_table(), std::vector<int32_t>{0});
  EXPECT_EQ(own.storage_row(6), 6);
  expect_error_mentions([&] { own.set_block_table({1}); }, "block_table[0] = 1");
}

TEST(KvCache, BlockTableChangesKeepTheFilledPrefix) {
  const ModelConfig m2 = config_of("m2-bf16");
  auto host = create_backend(BackendKind::kReference);
  KvBlockPool pool(*host, m2, 8, 4);
  KvCache cache(pool);
  EXPECT_EQ(cache.capacity(), 0);
  cache.set_block_table({3});
  const std::vector<int32_t> first = {0, 1, 2};
  cache.mark_filled(first.data(), 3);
  EXPECT_EQ(cache.length(), 3);
  cache.set_block_table({3, 4, 7});  // grows: the filled slots stay
  EXPECT_EQ(cache.capacity(), 12);
  EXPECT_EQ(cache.length(), 3);
  const std::vector<int32_t> later = {3, 4, 9};
  EXPECT_EQ(cache.length_after(later.data(), 3), 5);
  EXPECT_EQ(cache.length(), 3);  // length_after changes nothing
  cache.mark_filled(later.data(), 3);
  EXPECT_EQ(cache.length(), 5);
  cache.set_block_table({3});  // shrinks: length clipped to the new capacity
  EXPECT_EQ(cache.length(), 4);
  cache.set_block_table({3, 4, 7});  // slot 9 filled before is forgotten
  const std::vector<int32_t> fill = {4, 5, 6, 7, 8};
  cache.mark_filled(fill.data(), 5);
  EXPECT_EQ(cache.length(), 9);

  cache.set_length(10);  // a shared prefix: declared filled
  EXPECT_EQ(cache.length(), 10);
  cache.set_length(2);  // everything from 2 on empty
  EXPECT_EQ(cache.length(), 2);
  const std::vector<int32_t> three = {3};
  cache.mark_filled(three.data(), 1);
  EXPECT_EQ(cache.length(), 2);
  expect_error_mentions([&] { cache.set_length(13); }, "set_length(13)");
  expect_error_mentions([&] { cache.set_block_table({1, 8}); }, "block_table[1] = 8");
  expect_error_mentions([&] { cache.set_block_table({-1}); }, "block_table[0] = -1");

  KvCache contiguous(std::make_unique<KvBlockPool>(*host, m2, 1, 6));
  contiguous.set_length(6);
  EXPECT_EQ(contiguous.length(), 6);
  contiguous.clear();
  EXPECT_EQ(contiguous.length(), 0);
}

}  // namespace
}  // namespace minimax
