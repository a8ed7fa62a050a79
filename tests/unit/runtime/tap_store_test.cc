// The EAGLE-3 tap store (runtime/spec/tap_store.h): blocks come back as they were put, a key names
// its whole prefix, and the least recently used blocks go first past the byte limit.
#include "runtime/spec/tap_store.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"

namespace minimax {
namespace {

std::vector<float> rows_of(float v, size_t n) { return std::vector<float>(n, v); }

TEST(TapStore, KeysNameTheWholePrefix) {
  const std::vector<int32_t> a = {1, 2, 3, 4}, b = {1, 2, 3, 5};
  const uint64_t ka = TapStore::chain(0, a), kb = TapStore::chain(0, b);
  EXPECT_NE(ka, kb);
  EXPECT_EQ(ka, TapStore::chain(0, a));
  // The same block after different prefixes has different keys.
  EXPECT_NE(TapStore::chain(ka, a), TapStore::chain(kb, a));
}

TEST(TapStore, BlocksComeBackAndTheLeastRecentlyUsedGoFirst) {
  const int64_t width = 3, block = 2, per_block = width * block * 4;
  TapStore store(width, block, 2 * per_block);  // room for two blocks
  std::vector<float> out;
  EXPECT_FALSE(store.get(1, out));
  store.put(1, rows_of(1.0f, 6));
  store.put(2, rows_of(2.0f, 6));
  ASSERT_TRUE(store.get(1, out));  // block 1 is now the more recent
  EXPECT_EQ(out, rows_of(1.0f, 6));
  store.put(3, rows_of(3.0f, 6));  // evicts block 2
  EXPECT_EQ(store.blocks(), 2);
  EXPECT_FALSE(store.get(2, out));
  ASSERT_TRUE(store.get(3, out));
  EXPECT_EQ(out, rows_of(3.0f, 6));
  store.put(3, rows_of(9.0f, 6));  // a key held is kept as it is
  ASSERT_TRUE(store.get(3, out));
  EXPECT_EQ(out, rows_of(3.0f, 6));
  EXPECT_THROW(store.put(4, rows_of(4.0f, 5)), Error);
  TapStore none(width, block, per_block - 1);  // not one block fits: nothing is kept
  none.put(1, rows_of(1.0f, 6));
  EXPECT_FALSE(none.get(1, out));
}

}  // namespace
}  // namespace minimax
