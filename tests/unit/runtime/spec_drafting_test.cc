// Draft-free drafting: vLLM's --speculative-config JSON, prompt lookup, suffix decoding over the
// request and recent outputs, and the cost-aware choice of draft length on a MoE model.
#include <gtest/gtest.h>

#include "base/error.h"
#include "runtime/spec/draft_policy.h"
#include "runtime/spec/drafter.h"
#include "runtime/spec/speculative_config.h"

namespace minimax {
namespace {

std::string error_of(std::string_view json) {
  try {
    parse_speculative_config(json);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SpeculativeConfigTest, ParsesVllmSpellings) {
  const SpeculativeConfig ngram = parse_speculative_config(
      R"({"method": "ngram", "num_speculative_tokens": 8, "prompt_lookup_min": 2,
          "prompt_lookup_max": 5})");
  EXPECT_EQ(ngram.method, DraftMethod::kNgram);
  EXPECT_EQ(ngram.num_speculative_tokens, 8);
  EXPECT_EQ(ngram.prompt_lookup_min, 2);
  EXPECT_EQ(ngram.prompt_lookup_max, 5);
  const SpeculativeConfig suffix = parse_speculative_config(
      R"({"method": "suffix", "suffix_decoding_max_tree_depth": 16,
          "suffix_decoding_min_token_prob": 0.25, "suffix_decoding_max_spec_factor": 2,
          "suffix_decoding_max_cached_requests": 7})");
  EXPECT_EQ(suffix.method, DraftMethod::kSuffix);
  EXPECT_EQ(suffix.suffix_max_tree_depth, 16);
  EXPECT_EQ(suffix.num_speculative_tokens, 24);  // vLLM: the tree depth's default
  EXPECT_DOUBLE_EQ(suffix.suffix_min_token_prob, 0.25);
  EXPECT_DOUBLE_EQ(suffix.suffix_max_spec_factor, 2.0);
  EXPECT_EQ(suffix.suffix_max_cached_requests, 7);
  // The JSON form parses back to the same settings.
  const SpeculativeConfig again = parse_speculative_config(speculative_config_json(suffix));
  EXPECT_EQ(again.suffix_max_tree_depth, 16);
  EXPECT_DOUBLE_EQ(again.suffix_min_token_prob, 0.25);
}

TEST(SpeculativeConfigTest, ReadsAnEagle3Head) {
  const SpeculativeConfig e = parse_speculative_config(
      R"({"method": "eagle3", "model": "/heads/m3", "num_speculative_tokens": 4})");
  EXPECT_EQ(e.method, DraftMethod::kEagle3);
  EXPECT_EQ(e.model, "/heads/m3");
  EXPECT_EQ(e.num_speculative_tokens, 4);
  EXPECT_EQ(
      parse_speculative_config(R"({"method": "eagle3", "model": "h"})").num_speculative_tokens,
      kEagle3DefaultTokens);
  const SpeculativeConfig back = parse_speculative_config(speculative_config_json(e));
  EXPECT_EQ(back.model, e.model);
  EXPECT_EQ(back.num_speculative_tokens, 4);
}

TEST(SpeculativeConfigTest, RefusesWithTheKeyNamed) {
  EXPECT_NE(error_of("{"), "");
  EXPECT_NE(error_of("[1]").find("JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"({"num_speculative_tokens": 4})").find("'method'"), std::string::npos);
  EXPECT_NE(error_of(R"({"method": "eagle3"})").find("needs 'model'"), std::string::npos);
  EXPECT_NE(error_of(R"({"method": "eagle3", "model": 3})").find("'model' must be"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "eagle3", "model": "h", "prompt_lookup_min": 2})")
                .find("applies to method \"ngram\" only"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "medusa"})").find("\"eagle3\""), std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "model": "x"})").find("'model'"), std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "num_speculative_tokens": 0})")
                .find("num_speculative_tokens"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"method": "ngram", "num_speculative_tokens": "8"})").find("must be an integer"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "prompt_lookup_min": 6, "prompt_lookup_max": 3})")
                .find("prompt_lookup_min"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "suffix", "prompt_lookup_max": 3})").find("\"ngram\" only"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "suffix_decoding_max_tree_depth": 3})")
                .find("\"suffix\" only"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "suffix", "suffix_decoding_min_token_prob": 1.5})")
                .find("suffix_decoding_min_token_prob"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"method": "ngram", "bogus": 1})").find("unknown key 'bogus'"),
            std::string::npos);
  EXPECT_EQ(error_of(R"({"method": "ngram"})"), "");
}

SpeculativeConfig ngram_config(int k = 8, int lo = 2, int hi = 4) {
  SpeculativeConfig c;
  c.method = DraftMethod::kNgram;
  c.num_speculative_tokens = k;
  c.prompt_lookup_min = lo;
  c.prompt_lookup_max = hi;
  return c;
}

TEST(DrafterTest, PromptLookupContinuesTheLongestMostRecentMatch) {
  Drafter drafter(ngram_config(), nullptr);
  // "1 2 3" occurs twice: after 9 1 2 3 → 4 5 6, after 8 1 2 3 → 7 7. The sequence ends in
  // 8 1 2 3, so the longer match (4 tokens) wins over the more recent 3-token one.
  const std::vector<int32_t> tokens = {8, 1, 2, 3, 4, 5, 6, 9, 1, 2, 3, 7, 7, 0, 8, 1, 2, 3};
  EXPECT_EQ(drafter.propose(tokens, 3), (std::vector<int32_t>{4, 5, 6}));
  // Equal lengths: the most recent occurrence.
  const std::vector<int32_t> recent = {1, 2, 3, 4, 0, 1, 2, 3, 5, 6, 1, 2, 3};
  Drafter fresh(ngram_config(8, 2, 3), nullptr);
  EXPECT_EQ(fresh.propose(recent, 8), (std::vector<int32_t>{5, 6, 1, 2, 3}));
  // Nothing repeats: nothing is proposed.
  Drafter none(ngram_config(), nullptr);
  EXPECT_TRUE(none.propose(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, 8).empty());
  // The cap applies: config and call.
  Drafter capped(ngram_config(2), nullptr);
  EXPECT_EQ(capped.propose(tokens, 8).size(), 2u);
}

TEST(DrafterTest, PromptLookupGrowsWithTheSequence) {
  Drafter drafter(ngram_config(4, 2, 3), nullptr);
  std::vector<int32_t> tokens = {5, 6, 7, 8, 9, 10, 11};
  EXPECT_TRUE(drafter.propose(tokens, 4).empty());
  tokens.insert(tokens.end(), {5, 6});
  EXPECT_EQ(drafter.propose(tokens, 4), (std::vector<int32_t>{7, 8, 9, 10}));
  tokens.push_back(7);
  EXPECT_EQ(drafter.propose(tokens, 4), (std::vector<int32_t>{8, 9, 10, 11}));
  // A shorter sequence (a rollback) rebuilds the index rather than reading stale positions.
  tokens.resize(3);
  EXPECT_TRUE(drafter.propose(tokens, 4).empty());
}

SpeculativeConfig suffix_config(double min_prob = 0.1, double factor = 4.0) {
  SpeculativeConfig c;
  c.method = DraftMethod::kSuffix;
  c.num_speculative_tokens = 16;
  c.suffix_max_tree_depth = 8;
  c.suffix_min_token_prob = min_prob;
  c.suffix_max_spec_factor = factor;
  return c;
}

TEST(DrafterTest, SuffixFollowsTheMostFrequentContinuationWhileLikely) {
  // After "1 2": three times 3 4, once 3 9, each after a different token than the final "5 1 2",
  // so all four match 2 tokens. The draft takes 3 (4/4), then 4 (3/4); the token after that
  // differs each time (1/3 more), below the floor of 0.5.
  const std::vector<int32_t> tokens = {6, 1, 2, 3, 4, 7, 1, 2, 3, 4, 8, 1,
                                       2, 3, 9, 6, 1, 2, 3, 4, 5, 1, 2};
  Drafter drafter(suffix_config(0.5), nullptr);
  const std::vector<int32_t> draft = drafter.propose(tokens, 16);
  EXPECT_EQ(draft, (std::vector<int32_t>{3, 4}));
  // A lower floor goes on with the most recent continuation: 5 (at 1/4), then its own tokens.
  Drafter loose(suffix_config(0.1), nullptr);
  EXPECT_EQ(loose.propose(tokens, 16), (std::vector<int32_t>{3, 4, 5, 1, 2}));
  // A higher probability floor stops before the less certain token.
  Drafter strict(suffix_config(0.8), nullptr);
  EXPECT_EQ(strict.propose(tokens, 16), (std::vector<int32_t>{3}));
  // The spec factor bounds the draft by the match length (2 here: 0.5 × 2 = 1 token).
  Drafter short_factor(suffix_config(0.0, 0.5), nullptr);
  EXPECT_EQ(short_factor.propose(tokens, 16).size(), 1u);
}

TEST(DrafterTest, SuffixPrefersTheLongerContextWhenItPredictsMore) {
  // "0 1 2" was followed by 3 3 3 3 once; "1 2" alone by 5 or 6 elsewhere. The longest match
  // (3 tokens) gives four certain tokens, better than the shorter match's uncertain ones.
  const std::vector<int32_t> tokens = {0, 1, 2, 3, 3, 3, 3, 9, 1, 2, 5, 8, 1, 2, 6, 8, 0, 1, 2};
  Drafter drafter(suffix_config(0.1, 4.0), nullptr);
  EXPECT_EQ(drafter.propose(tokens, 4), (std::vector<int32_t>{3, 3, 3, 3}));
}

TEST(DrafterTest, SuffixDraftsFromRecentOutputsOfOtherRequests) {
  auto recent = std::make_shared<RecentOutputs>(2);
  Drafter first(suffix_config(), recent);
  first.finish(std::vector<int32_t>{40, 41, 42, 43, 44, 45});
  Drafter second(suffix_config(), recent);
  EXPECT_EQ(second.propose(std::vector<int32_t>{7, 40, 41}, 16),
            (std::vector<int32_t>{42, 43, 44, 45}));
  // Bounded: two more outputs push the first one out.
  first.finish(std::vector<int32_t>{1, 2, 3});
  first.finish(std::vector<int32_t>{4, 5, 6});
  EXPECT_EQ(recent->size(), 2);
  Drafter third(suffix_config(), recent);
  EXPECT_TRUE(third.propose(std::vector<int32_t>{7, 40, 41}, 16).empty());
}

TEST(StepCostModelTest, ExpertUnionAndMeasuredTimes) {
  // 64 experts, 8 per token: one token reads 8, two about 15, many approach 64.
  EXPECT_DOUBLE_EQ(StepCostModel::expected_distinct_experts(64, 8, 1), 8.0);
  EXPECT_NEAR(StepCostModel::expected_distinct_experts(64, 8, 2), 15.0, 1e-9);
  EXPECT_NEAR(StepCostModel::expected_distinct_experts(64, 8, 200), 64.0, 0.01);
  StepCostModel cost(64, 8, 0.5);
  EXPECT_DOUBLE_EQ(cost.prior(1), 1.0);
  // Half the time reads experts, which double (nearly); a little arithmetic per token is added.
  EXPECT_NEAR(cost.prior(2), 0.5 + 0.5 * 15.0 / 8.0 + 1.0 / 32, 1e-9);
  // Before measurements the prior is the estimate; after, the measured time, and unmeasured
  // sizes scale from the nearest measured one.
  EXPECT_FALSE(cost.measured(1));
  cost.record(1, 0.010);
  EXPECT_TRUE(cost.measured(1));
  EXPECT_DOUBLE_EQ(cost.seconds(1), 0.010);
  EXPECT_NEAR(cost.seconds(2), 0.010 * cost.prior(2), 1e-12);
  cost.record(9, 0.100);
  EXPECT_DOUBLE_EQ(cost.seconds(9), 0.100);
  EXPECT_NEAR(cost.seconds(10), 0.100 * cost.prior(10) / cost.prior(9), 1e-12);
  EXPECT_GT(cost.seconds(5000), cost.seconds(300));
}

TEST(DraftPolicyTest, DraftsOnlyWhereTheGainBeatsTheExperts) {
  StepCostModel cost(64, 8, 0.9);
  cost.record(1, 0.010);
  for (int n = 2; n <= 17; ++n) cost.record(n, 0.010 * cost.prior(n));
  DraftPolicy policy(ngram_config(16));
  // Unsure (α = 0.5): two extra tokens at best, for steps that cost several decode steps.
  EXPECT_EQ(policy.choose(16, cost, 1, 1), 0);
  // Drafts that are always right pay: the longer the better on a union-of-experts cost.
  for (int i = 0; i < 30; ++i) policy.record(16, 16);
  EXPECT_GT(policy.acceptance(), 0.95);
  const int chosen = policy.choose(16, cost, 1, 1);
  EXPECT_GE(chosen, 8);
  // Drafts that keep failing stop drafting.
  for (int i = 0; i < 30; ++i) policy.record(16, 0);
  EXPECT_EQ(policy.choose(16, cost, 1, 1), 0);
  // Not adaptive: every available token is verified.
  SpeculativeConfig fixed = ngram_config(16);
  fixed.adaptive = false;
  EXPECT_EQ(DraftPolicy(fixed).choose(5, cost, 1, 1), 5);
  EXPECT_EQ(DraftPolicy(fixed).choose(40, cost, 1, 1), 16);
}

TEST(DraftPolicyTest, ShadowDraftsBringASequenceBackToDrafting) {
  StepCostModel cost(64, 8, 0.9);
  DraftPolicy policy(ngram_config(8));
  for (int i = 0; i < 30; ++i) policy.record(8, 0);
  EXPECT_EQ(policy.choose(8, cost, 1, 1), 0);
  // Unverified proposals that the model then emits count as accepted.
  for (int round = 0; round < 30; ++round) {
    policy.shadow_propose({1, 2, 3, 4, 5, 6, 7, 8});
    for (int32_t t = 1; t <= 8; ++t) policy.shadow_emitted(t);
    EXPECT_FALSE(policy.shadow_pending());
  }
  EXPECT_GT(policy.choose(8, cost, 1, 1), 0);
  // A wrong shadow token closes the proposal as a rejection.
  policy.shadow_propose({1, 2, 3});
  policy.shadow_emitted(1);
  policy.shadow_emitted(9);
  EXPECT_FALSE(policy.shadow_pending());
}

}  // namespace
}  // namespace minimax
