// A rank's share of a loaded weight, chosen by the tensor table's split rule
// (model/weight_loader.h rank_slice): equal to the corresponding part of the whole weight.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"
#include "checkpoint/tensor_table.h"
#include "kernels/reference/weight_rows.h"
#include "model/model_weights.h"
#include "model/weight_loader.h"
#include "tiny_fixture.h"

namespace minimax {
namespace {

std::vector<double> row_of(const WeightView& w, int64_t r) {
  std::vector<double> out(w.cols);
  reference::decode_row(w, r, out.data());
  return out;
}

class RankSliceTest : public ::testing::TestWithParam<QuantScheme> {};

TEST_P(RankSliceTest, TpTpSharesArePartsOfTheWhole) {
  const std::string dir = testing_support::tiny_checkpoint(Arch::kM2, GetParam(), 1, 256);
  const ModelConfig config = load_model_config(dir);
  const QuantConfig quant = load_quant_config(dir);
  const TensorStore store(dir);
  const ModelWeights weights = load_model_weights(store, config, quant, {});
  const TensorTable table(config);
  const int layer = 1, expert = 3, rank = 1, ranks = 2;

  // q_proj: by rows (heads) under TP_TP; rank 1 holds the second half of the rows.
  const TensorSpec& q_spec = table.at({TensorKey::kQProj, layer});
  ASSERT_EQ(q_spec.split.tp_tp, Split::kRows);
  const WeightView& q = weights.layers[layer].attn.q;
  const WeightView q_share = rank_slice(q, q_spec.split.tp_tp, rank, ranks, q_spec.name);
  ASSERT_EQ(q_share.rows, q.rows / 2);
  ASSERT_EQ(q_share.cols, q.cols);
  for (int64_t r = 0; r < q_share.rows; ++r)
    ASSERT_EQ(row_of(q_share, r), row_of(q, q.rows / 2 + r)) << r;

  // An expert's w2: by columns (its inner width) under TP_TP.
  const TensorSpec& w2_spec = table.at({TensorKey::kExpertDown, layer, expert});
  ASSERT_EQ(w2_spec.split.tp_tp, Split::kCols);
  const WeightView& w2 = weights.layers[layer].moe_weights.experts[expert].down;
  const WeightView w2_share = rank_slice(w2, w2_spec.split.tp_tp, rank, ranks, w2_spec.name);
  ASSERT_EQ(w2_share.rows, w2.rows);
  ASSERT_EQ(w2_share.cols, w2.cols / 2);
  for (int64_t r = 0; r < w2.rows; ++r) {
    const std::vector<double> whole = row_of(w2, r);
    ASSERT_EQ(row_of(w2_share, r), std::vector<double>(whole.begin() + w2.cols / 2, whole.end()))
        << r;
  }

  // Under the EP modes experts are whole, on the rank that owns them.
  ASSERT_EQ(w2_spec.split.tp_ep, Split::kExpert);
  const WeightView whole = rank_slice(w2, w2_spec.split.tp_ep, 0, ranks, w2_spec.name);
  EXPECT_EQ(whole.data, w2.data);
  EXPECT_EQ(expert_owner(expert, config.num_experts, ranks), 0);
  EXPECT_EQ(expert_owner(config.num_experts - 1, config.num_experts, ranks), 1);
  // Replicated entries are the whole view on every rank.
  const TensorSpec& router = table.at({TensorKey::kRouter, layer});
  EXPECT_EQ(
      rank_slice(weights.layers[layer].moe_weights.router, router.split.tp_tp, 1, 2, "r").data,
      weights.layers[layer].moe_weights.router.data);
}

INSTANTIATE_TEST_SUITE_P(Layouts, RankSliceTest,
                         ::testing::Values(QuantScheme::kNone, QuantScheme::kFp8Channel,
                                           QuantScheme::kNvfp4),
                         [](const auto& info) {
                           std::string name(quant_scheme_name(info.param));
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(RankSlice, UnevenOrOffBlockSharesAreRefused) {
  const std::string dir = testing_support::tiny_checkpoint(Arch::kM2, QuantScheme::kMxfp4, 1, 256);
  const ModelConfig config = load_model_config(dir);
  const TensorStore store(dir);
  const ModelWeights weights = load_model_weights(store, config, load_quant_config(dir), {});
  const WeightView& w2 = weights.layers[0].moe_weights.experts[0].down;  // 32 columns of MXFP4
  EXPECT_NO_THROW(rank_slice(w2, Split::kCols, 0, 1, "w2"));
  try {
    rank_slice(w2, Split::kCols, 1, 2, "model.layers.0.block_sparse_moe.experts.0.w2.weight");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("experts.0.w2.weight"));
  }
  EXPECT_THROW(rank_slice(weights.layers[0].attn.q, Split::kRows, 0, 3, "q"), Error);
}

}  // namespace
}  // namespace minimax
