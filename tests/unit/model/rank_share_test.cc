// The weights a rank loads under a parallel plan (model/model_weights.h, LoadOptions::plan) are
// exactly the corresponding parts of the whole weights, cut by the tensor table's split rules;
// under expert parallelism the other ranks' experts are never loaded. What prefault_weights reads
// in (ModelWeights::kept) stays inside the tensors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <vector>

#include "base/error.h"
#include "model/model_weights.h"
#include "tiny_fixture.h"
#include "weight_part_checks.h"

namespace minimax {
namespace {

using testing_support::row_of;

using testing_support::expect_part;

// Each span of `w.kept` lies inside one stored tensor's bytes or one owned buffer: what
// prefault_weights reads is the views' bytes, strided shares included, and nothing beyond them.
void expect_kept_inside(const ModelWeights& w, const TensorStore& store) {
  std::vector<std::span<const uint8_t>> ranges;
  for (size_t s = 0; s < store.num_shards(); ++s)
    for (const TensorInfo& info : store.shard(s).tensors())
      ranges.push_back(store.shard(s).data(info));
  for (const std::vector<uint8_t>& o : w.owned) ranges.emplace_back(o.data(), o.size());
  ASSERT_FALSE(w.kept.empty());
  for (const std::span<const uint8_t>& k : w.kept)
    EXPECT_TRUE(std::any_of(ranges.begin(), ranges.end(),
                            [&](std::span<const uint8_t> r) {
                              return k.data() >= r.data() &&
                                     k.data() + k.size() <= r.data() + r.size();
                            }))
        << "a kept span of " << k.size() << " bytes is not inside one tensor";
  prefault_weights(w, false);  // reads exactly those bytes (under ASan: nothing beyond)
}

class RankShareTest : public ::testing::TestWithParam<QuantScheme> {};

TEST_P(RankShareTest, TpTpAndTpEpSharesArePartsOfTheWhole) {
  const std::string dir = testing_support::tiny_checkpoint(Arch::kM2, GetParam(), 1, 256);
  const ModelConfig config = load_model_config(dir);
  const QuantConfig quant = load_quant_config(dir);
  const TensorStore store(dir);
  const ModelWeights whole = load_model_weights(store, config, quant, {});
  const int layer = 1, rank = 1, hd = config.head_dim;

  LoadOptions tp;
  tp.plan = make_parallel_plan({.tensor_parallel = 2}, 2, rank, config);
  const ModelWeights mine = load_model_weights(store, config, quant, tp);
  const AttentionWeights &a = whole.layers[layer].attn, &b = mine.layers[layer].attn;
  // Rank 1 of 2: query heads 4..7, KV head 1, o_proj's matching input columns.
  EXPECT_EQ(b.q.rows, a.q.rows / 2);
  expect_part(a.q, b.q, 4 * hd, 0);
  expect_part(a.k, b.k, 1 * hd, 0);
  expect_part(a.v, b.v, 1 * hd, 0);
  expect_part(a.o, b.o, 0, 4 * hd);
  // M2's cross-head norm weights follow their heads.
  EXPECT_EQ(b.q_norm, std::vector<float>(a.q_norm.begin() + 4 * hd, a.q_norm.end()));
  // Experts split by their inner width: w1 by rows, w2 by columns.
  const ExpertWeights &e = whole.layers[layer].moe_weights.experts[3],
                      &f = mine.layers[layer].moe_weights.experts[3];
  expect_part(e.gate, f.gate, e.gate.rows / 2, 0);
  expect_part(e.down, f.down, 0, e.down.cols / 2);
  EXPECT_LT(mine.mapped_bytes, whole.mapped_bytes);
  expect_kept_inside(whole, store);
  expect_kept_inside(mine, store);

  // Expert parallel: rank 1 holds experts 8..15 whole and never loads the others.
  LoadOptions ep;
  ep.plan = make_parallel_plan({.tensor_parallel = 2, .expert_parallel = true}, 2, rank, config);
  const ModelWeights held = load_model_weights(store, config, quant, ep);
  const std::vector<ExpertWeights>& experts = held.layers[layer].moe_weights.experts;
  EXPECT_EQ(experts[3].gate.data, nullptr);
  EXPECT_EQ(experts[8].gate.data, whole.layers[layer].moe_weights.experts[8].gate.data);
  // The router stays whole on every rank.
  EXPECT_EQ(held.layers[layer].moe_weights.router.data,
            whole.layers[layer].moe_weights.router.data);
  expect_kept_inside(held, store);
  EXPECT_LT(kept_bytes(held), kept_bytes(whole));  // the other ranks' experts are not read in
}

INSTANTIATE_TEST_SUITE_P(Layouts, RankShareTest,
                         ::testing::Values(QuantScheme::kNone, QuantScheme::kFp8Block,
                                           QuantScheme::kFp8Channel, QuantScheme::kNvfp4),
                         [](const auto& info) {
                           std::string name(quant_scheme_name(info.param));
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

TEST(RankShare, CutsThroughMxfp4BlocksAreRefusedNamingTheTensor) {
  // The tiny M2's experts are 32 wide: halves would cut MXFP4's 32-wide scale blocks.
  const std::string dir = testing_support::tiny_checkpoint(Arch::kM2, QuantScheme::kMxfp4, 1, 256);
  const ModelConfig config = load_model_config(dir);
  const TensorStore store(dir);
  LoadOptions tp;
  tp.plan = make_parallel_plan({.tensor_parallel = 2}, 2, 0, config);
  try {
    load_model_weights(store, config, load_quant_config(dir), tp);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("w2.weight: columns [0, 16) do not start and end"));
  }
}

}  // namespace
}  // namespace minimax
