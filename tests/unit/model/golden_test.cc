// The engine against the golden logits of the independent PyTorch reference
// (tools/reference/make_goldens.py): both architectures × the seven weight layouts, plus M3 prompts
// long enough for the MSA block choice to matter, on the reference and the cpu backend.
//
// Tolerance: |engine − golden| ≤ 2e-4 on every compared logit (logits are O(1)–O(5); the engine
// computes in f32 against a float64 reference, measured max difference ≈ 2e-6), and the top-1 id
// identical at every checked position. The same bound serves every layout, MXFP8 and Quark FP8
// attention included: stored weights decode exactly (a code times power-of-two or f32 scales is
// one f32 rounding at most), so the layout adds no error of its own (measured ≤ 1e-6 for each).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/model.h"
#include "tiny_fixture.h"

namespace minimax {
namespace {

using testing_support::golden_checkpoint;
using testing_support::golden_names;
using testing_support::iota_positions;
using testing_support::load_golden;

using testing_support::kLogitTolerance;

int64_t golden_argmax(const float* row, int64_t n) { return std::max_element(row, row + n) - row; }

struct GoldenCase {
  std::string golden;
  BackendKind backend;
};

std::string golden_case_name(const ::testing::TestParamInfo<GoldenCase>& info) {
  std::string name = info.param.golden + "_" + std::string(backend_name(info.param.backend));
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

std::vector<GoldenCase> all_cases() {
  std::vector<GoldenCase> cases;
  for (const std::string& name : golden_names())
    for (BackendKind b : {BackendKind::kReference, BackendKind::kCpu}) cases.push_back({name, b});
  return cases;
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

// Compares one row of engine logits with a golden vector; returns the largest difference.
double compare_row(const float* row, const nlohmann::json& golden_row, const std::string& what) {
  double worst = 0;
  for (size_t i = 0; i < golden_row.size(); ++i)
    worst = std::max(worst, std::fabs(row[i] - golden_row[i].get<double>()));
  EXPECT_LE(worst, kLogitTolerance) << what;
  return worst;
}

TEST_P(GoldenTest, MatchesReferenceLogits) {
  const nlohmann::json g = load_golden(GetParam().golden);
  ModelOptions options;
  options.backend = GetParam().backend;
  options.threads = 2;
  auto model = Model::load(golden_checkpoint(g), options);
  const auto tokens = g.at("tokens").get<std::vector<int32_t>>();
  const int64_t vocab = g.at("vocab_size").get<int64_t>();
  KvCache cache = model->new_cache(static_cast<int64_t>(tokens.size()), KvDtype::kF32);
  const std::vector<float> logits =
      model->forward(tokens, iota_positions(tokens.size()), cache, LogitsFor::kAllTokens);
  ASSERT_EQ(logits.size(), tokens.size() * vocab);

  double worst = 0;
  for (const auto& check : g.at("checked")) {
    const int64_t pos = check.at("position").get<int64_t>();
    const float* row = logits.data() + pos * vocab;
    const auto ids = check.at("top_ids").get<std::vector<int64_t>>();
    EXPECT_EQ(golden_argmax(row, vocab), ids[0]) << "top-1 at position " << pos;
    for (size_t k = 0; k < ids.size(); ++k) {
      const double diff = std::fabs(row[ids[k]] - check.at("top_logits")[k].get<double>());
      worst = std::max(worst, diff);
      EXPECT_LE(diff, kLogitTolerance) << "position " << pos << " token " << ids[k];
    }
  }
  const float* last = logits.data() + (tokens.size() - 1) * vocab;
  worst = std::max(worst, compare_row(last, g.at("last_logits"), "last position"));
  const auto& golden_last = g.at("last_logits");
  int64_t golden_top = 0;
  for (int64_t i = 1; i < vocab; ++i)
    if (golden_last[i].get<double>() > golden_last[golden_top].get<double>()) golden_top = i;
  EXPECT_EQ(golden_argmax(last, vocab), golden_top);
  std::printf("[ measured ] %s on %s: max |engine - golden| = %.3g\n",
              g["case"].get<std::string>().c_str(), model->ops().name, worst);

  if (!g.contains("dense_last_logits")) return;
  // The long M3 cases: the sparse result is not the dense one, and the dense diagnostic mode
  // matches the reference's dense attention.
  double sparse_vs_dense = 0;
  for (int64_t i = 0; i < vocab; ++i)
    sparse_vs_dense =
        std::max(sparse_vs_dense, std::fabs(last[i] - g["dense_last_logits"][i].get<double>()));
  EXPECT_GT(sparse_vs_dense, 1e-2);
  options.dense_attention = true;
  auto dense = Model::load(golden_checkpoint(g), options);
  KvCache dense_cache = dense->new_cache(static_cast<int64_t>(tokens.size()), KvDtype::kF32);
  const std::vector<float> dense_logits =
      dense->forward(tokens, iota_positions(tokens.size()), dense_cache, LogitsFor::kLastToken);
  compare_row(dense_logits.data(), g.at("dense_last_logits"), "dense attention, last position");
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, GoldenTest, ::testing::ValuesIn(all_cases()),
                         golden_case_name);

TEST(GoldenFiles, CoverBothArchitecturesEveryLayoutAndLongM3Prompts) {
  std::set<std::string> names;
  for (const std::string& n : golden_names()) names.insert(n);
  for (const char* arch : {"m2", "m3"})
    for (const char* format :
         {"bf16", "fp8-block", "fp8-channel", "mxfp4", "nvfp4", "mxfp8", "mxfp4-fp8attn"})
      EXPECT_TRUE(names.count(std::string(arch) + "-" + format)) << arch << " " << format;
  const nlohmann::json long_case = load_golden("m3-bf16-long");
  // Longer than top_k · block tokens, so positions past it pick blocks.
  EXPECT_GT(long_case.at("tokens").size(), long_case.at("dense_below").get<size_t>());
}

}  // namespace
}  // namespace minimax
