// A rank's share of a weight (model/weight_shard.h) holds exactly the values of that part of the
// whole weight: block-FP8 cuts off the 128-tile grid are re-tiled, other cuts are views, and cuts
// through an MXFP4 scale block are refused with the tensor's name and the columns.
#include "model/weight_shard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "base/error.h"
#include "weight_part_checks.h"

namespace minimax {
namespace {

using testing_support::row_of;

// A 384 × 384 block-FP8 weight: codes vary by position, and every 128 × 128 tile has its own scale.
struct Fp8Block {
  std::vector<uint8_t> codes = std::vector<uint8_t>(384 * 384);
  std::vector<float> scales = std::vector<float>(9);
  WeightView view() {
    for (size_t i = 0; i < codes.size(); ++i)
      codes[i] = static_cast<uint8_t>((i * 37 + i / 384) % 120);
    for (size_t t = 0; t < scales.size(); ++t) scales[t] = 0.5f + 0.25f * static_cast<float>(t);
    WeightView w;
    w.format = WeightFormat::kFp8Block;
    w.rows = w.cols = 384;
    w.data = codes.data();
    w.scales = scales.data();
    return w;
  }
};

using testing_support::expect_part;

TEST(WeightShard, Fp8BlockRowCutOffTheTileGridIsExact) {
  Fp8Block f;
  const WeightView w = f.view();
  std::vector<std::vector<uint8_t>> owned;
  WeightSharder sharder(&owned);
  // Real M2 at TP 8: 192-wide shares of a 1536 width; here rank 1 of 2 of 384 rows.
  const WeightView share = sharder.row_share(w, 1, 2, "w1");
  EXPECT_EQ(share.rows, 192);
  EXPECT_EQ(share.block_rows, 64);  // gcd(128, 192)
  EXPECT_EQ(owned.size(), 1u);      // its own scales; the codes are the same bytes
  EXPECT_EQ(share.data, w.data + 192 * 384);
  expect_part(w, share, 192, 0);
}

TEST(WeightShard, Fp8BlockColumnCutOffTheTileGridIsExact) {
  Fp8Block f;
  const WeightView w = f.view();
  std::vector<std::vector<uint8_t>> owned;
  WeightSharder sharder(&owned);
  const WeightView share = sharder.col_share(w, 1, 2, "w2");
  EXPECT_EQ(share.cols, 192);
  EXPECT_EQ(share.block_cols, 64);
  expect_part(w, share, 0, 192);
  EXPECT_EQ(owned.size(), 2u);  // its finer scales and its rows, copied next to each other
  EXPECT_EQ(weight_data_stride(share), weight_row_bytes(share));
  // A cut on the grid keeps the stored scales; its rows are copied too (a rank streams them whole).
  const WeightView aligned = sharder.col_share(w, 1, 3, "w2");
  EXPECT_EQ(owned.size(), 3u);  // the rows only
  EXPECT_EQ(weight_data_stride(aligned), weight_row_bytes(aligned));
  expect_part(w, aligned, 0, 128);
  // A row share on the grid is a view of the same bytes.
  const WeightView rows = sharder.row_share(w, 1, 3, "w2");
  EXPECT_EQ(owned.size(), 3u);
  EXPECT_EQ(rows.data, w.data + 128 * 384);
}

TEST(WeightShard, Mxfp4CutThroughAScaleBlockIsRefusedNamingTheTensor) {
  std::vector<uint8_t> codes(4 * 32), scales(4 * 2, 127);
  WeightView w;
  w.format = WeightFormat::kMxfp4;
  w.rows = 4;
  w.cols = 64;
  w.data = codes.data();
  w.scales = scales.data();
  std::vector<std::vector<uint8_t>> owned;
  WeightSharder sharder(&owned);
  EXPECT_NO_THROW(sharder.col_share(w, 1, 2, "x"));  // 32 columns each: whole blocks
  try {
    sharder.col_share(w, 1, 4, "model.layers.0.block_sparse_moe.experts.0.w2.weight");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("experts.0.w2.weight: columns [16, 32)"));
  }
  EXPECT_THROW(sharder.row_share(w, 0, 3, "rows"), Error);  // 4 rows among 3
}

}  // namespace
}  // namespace minimax
