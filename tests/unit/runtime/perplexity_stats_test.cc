// The statistics of `minimax perplexity` on distributions small enough to work out by hand: top-K
// selection and ties, log-probabilities with the rest bucket, the top-K KL divergence against the
// full one, percentiles, means with their standard errors.
#include "runtime/perplexity_stats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/error.h"

namespace minimax {
namespace {

using ::testing::HasSubstr;

// Logits whose softmax is `probabilities` (log p: the log-sum-exp is 0).
std::vector<float> logits_for_probabilities(const std::vector<double>& probabilities) {
  std::vector<float> out;
  for (double p : probabilities) out.push_back(static_cast<float>(std::log(p)));
  return out;
}

double full_kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) kl += p[i] * std::log(p[i] / q[i]);
  return kl;
}

TEST(PerplexityStatsTest, TopKIsMostLikelyFirstWithTiesToTheLowerId) {
  const std::vector<float> row = {1, 3, 2, 3, 0, 2};
  EXPECT_EQ(top_k_ids(row, 3), (std::vector<int32_t>{1, 3, 2}));
  EXPECT_EQ(top_k_ids(row, 1), (std::vector<int32_t>{1}));
  EXPECT_EQ(top_k_ids(row, 10), (std::vector<int32_t>{1, 3, 2, 5, 0, 4}));
  EXPECT_TRUE(top_k_ids(row, 0).empty());
  EXPECT_EQ(argmax_id(row), 1);
  EXPECT_EQ(argmax_id(std::vector<float>{5, 5}), 0);
}

TEST(PerplexityStatsTest, LogprobsOverIdsAndTheRestBucket) {
  const std::vector<float> row = logits_for_probabilities({0.5, 0.25, 0.125, 0.125});
  EXPECT_NEAR(log_sum_exp(row), 0.0, 1e-7);
  const std::vector<int32_t> ids = {0, 1};
  const PositionLogprobs lp = logprobs_over(row, ids, 2);
  EXPECT_NEAR(lp.logprobs[0], std::log(0.5), 1e-6);
  EXPECT_NEAR(lp.logprobs[1], std::log(0.25), 1e-6);
  EXPECT_NEAR(lp.rest_logprob, std::log(0.25), 1e-6);
  EXPECT_NEAR(lp.next_logprob, std::log(0.125), 1e-6);
  // The whole vocabulary as ids: nothing is left.
  const std::vector<int32_t> all = {3, 2, 1, 0};
  EXPECT_EQ(logprobs_over(row, all, 0).rest_logprob, -std::numeric_limits<float>::infinity());
  // A rest far below the top (1e-30 of the mass) is summed directly, not lost as 1 - top.
  const std::vector<float> peaked = {0, -69.0776f, -69.0776f};  // e^-69.08 = 1e-30
  const std::vector<int32_t> top = {0};
  EXPECT_NEAR(logprobs_over(peaked, top, 0).rest_logprob, std::log(2e-30), 1e-4);
}

TEST(PerplexityStatsTest, LogprobsOverRefusesIdsOutsideTheRowAndRepeats) {
  const std::vector<float> row = {0, 1, 2};
  const std::vector<int32_t> outside = {0, 3};
  const std::vector<int32_t> repeated = {1, 1};
  EXPECT_THROW(logprobs_over(row, outside, 0), Error);
  EXPECT_THROW(logprobs_over(row, repeated, 0), Error);
  EXPECT_THROW(logprobs_over(row, {}, 3), Error);
  const std::vector<float> nan_row = {0, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_THROW(logprobs_over(nan_row, {}, 0), Error);
}

TEST(PerplexityStatsTest, TopKKlMatchesAHandComputedValue) {
  // P = (1/2, 1/4, 1/8, 1/8), Q uniform; top-2 of P and one bucket of 1/4 against Q's 1/2:
  // 1/2 ln 2 + 1/4 ln 1 + 1/4 ln(1/2) = ln(2) / 4, which is also the full KL here (the bucket's
  // tokens stand in the same ratio under P and Q).
  const std::vector<double> p = {0.5, 0.25, 0.125, 0.125}, q = {0.25, 0.25, 0.25, 0.25};
  const std::vector<float> base_row = logits_for_probabilities(p),
                           run_row = logits_for_probabilities(q);
  const PositionLogprobs base = logprobs_over(base_row, top_k_ids(base_row, 2), 0);
  const PositionLogprobs run = logprobs_over(run_row, base.ids, 0);
  EXPECT_EQ(base.ids, (std::vector<int32_t>{0, 1}));
  EXPECT_NEAR(top_k_kl_divergence(base, run), std::log(2.0) / 4, 1e-6);
  EXPECT_NEAR(top_k_kl_divergence(base, run), full_kl_divergence(p, q), 1e-6);
}

TEST(PerplexityStatsTest, TopKKlIsALowerBoundOfTheFullKl) {
  // Q splits the bucket unlike P: the bucket hides that part of the divergence.
  const std::vector<double> p = {0.5, 0.25, 0.125, 0.125}, q = {0.25, 0.25, 0.4, 0.1};
  const std::vector<float> base_row = logits_for_probabilities(p),
                           run_row = logits_for_probabilities(q);
  const PositionLogprobs base = logprobs_over(base_row, top_k_ids(base_row, 2), 0);
  const PositionLogprobs run = logprobs_over(run_row, base.ids, 0);
  const double bucketed = 0.5 * std::log(2.0) + 0.25 * std::log(0.25 / 0.5);
  EXPECT_NEAR(top_k_kl_divergence(base, run), bucketed, 1e-6);
  EXPECT_LT(top_k_kl_divergence(base, run), full_kl_divergence(p, q));
  // With every token in the top-K the bucket is empty and the KL is the full one.
  const PositionLogprobs whole = logprobs_over(base_row, top_k_ids(base_row, 4), 0);
  EXPECT_NEAR(top_k_kl_divergence(whole, logprobs_over(run_row, whole.ids, 0)),
              full_kl_divergence(p, q), 1e-6);
}

TEST(PerplexityStatsTest, IdenticalDistributionsGiveZeroKlAndFullAgreement) {
  const std::vector<float> row = {0.3f, -1.7f, 2.25f, 0.01f, -4.0f, 1.5f};
  KlComparison comparison;
  for (int32_t next = 0; next < 6; ++next) {
    const PositionLogprobs base = logprobs_over(row, top_k_ids(row, 3), next);
    comparison.add(base, logprobs_over(row, base.ids, next), argmax_id(row));
  }
  EXPECT_EQ(comparison.count(), 6);
  EXPECT_EQ(comparison.kl().mean(), 0.0);
  EXPECT_EQ(comparison.kl_percentile(0.99), 0.0);
  EXPECT_EQ(comparison.kl_max(), 0.0);
  EXPECT_EQ(comparison.top1().mean(), 1.0);
  EXPECT_EQ(comparison.top1().standard_error(), 0.0);
  EXPECT_EQ(comparison.max_abs_dlogprob(), 0.0);
}

TEST(PerplexityStatsTest, ComparisonCountsTop1AndTheLargestLogprobChange) {
  const std::vector<double> p = {0.5, 0.25, 0.125, 0.125}, q = {0.2, 0.6, 0.1, 0.1};
  const std::vector<float> base_row = logits_for_probabilities(p),
                           run_row = logits_for_probabilities(q);
  KlComparison comparison;
  for (int32_t next : {0, 1}) {
    const PositionLogprobs base = logprobs_over(base_row, top_k_ids(base_row, 2), next);
    comparison.add(base, logprobs_over(run_row, base.ids, next), argmax_id(run_row));
    const PositionLogprobs same = logprobs_over(base_row, top_k_ids(base_row, 2), next);
    comparison.add(same, logprobs_over(base_row, same.ids, next), argmax_id(base_row));
  }
  EXPECT_EQ(comparison.top1().mean(), 0.5);  // the run's argmax is 1, the base's 0
  EXPECT_NEAR(comparison.top1().standard_error(), std::sqrt(0.25 / 3), 1e-12);
  EXPECT_NEAR(comparison.max_abs_dlogprob(), std::log(0.5 / 0.2), 1e-6);  // token 0
  EXPECT_NEAR(comparison.base_nll().mean(), -(std::log(0.5) + std::log(0.25)) / 2, 1e-6);
}

TEST(PerplexityStatsTest, RunWithoutRestMassGivesInfiniteKl) {
  PositionLogprobs base, run;
  base.ids = run.ids = {0};
  base.logprobs = {std::log(0.5f)};
  base.rest_logprob = std::log(0.5f);
  run.logprobs = {0};
  run.rest_logprob = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(top_k_kl_divergence(base, run), std::numeric_limits<double>::infinity());
}

TEST(PerplexityStatsTest, PercentileInterpolatesBetweenRanks) {
  EXPECT_EQ(percentile({5, 1, 4, 2, 3}, 0.5), 3.0);
  EXPECT_EQ(percentile({5, 1, 4, 2, 3}, 0.0), 1.0);
  EXPECT_EQ(percentile({5, 1, 4, 2, 3}, 1.0), 5.0);
  EXPECT_NEAR(percentile({5, 1, 4, 2, 3}, 0.99), 4.96, 1e-12);  // rank 3.96
  EXPECT_NEAR(percentile({0, 10}, 0.25), 2.5, 1e-12);
  EXPECT_EQ(percentile({7}, 0.99), 7.0);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_NEAR(percentile(hundred, 0.99), 99.01, 1e-9);  // rank 98.01 of 0..99
  EXPECT_THAT([] { percentile({}, 0.5); }, ::testing::ThrowsMessage<Error>(HasSubstr("no values")));
  EXPECT_THROW(percentile({1}, 1.5), Error);
}

TEST(PerplexityStatsTest, MeanStandardErrorAndPerplexity) {
  MeanEstimate nll;
  EXPECT_EQ(nll.mean(), 0.0);
  EXPECT_EQ(nll.standard_error(), 0.0);
  for (double x : {1.0, 2.0, 3.0, 4.0}) nll.add(x);
  EXPECT_EQ(nll.count(), 4);
  EXPECT_DOUBLE_EQ(nll.mean(), 2.5);
  // E[x²] - E[x]² = 7.5 - 6.25 = 1.25 over n - 1 = 3.
  EXPECT_NEAR(nll.standard_error(), std::sqrt(1.25 / 3), 1e-12);
  const Perplexity ppl = perplexity_of(nll);
  EXPECT_NEAR(ppl.value, std::exp(2.5), 1e-9);
  EXPECT_NEAR(ppl.standard_error, std::exp(2.5) * std::sqrt(1.25 / 3), 1e-9);
}

}  // namespace
}  // namespace minimax
