// Sampler steps on hand-computable logits: penalties, temperature, min-p, top-k, top-p, greedy
// ties, inverse-CDF draws, logprobs, the seeded stream and the composed Sampler.
#include "runtime/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "base/error.h"

namespace minimax {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Logits whose softmax is exactly `probs` (up to rounding).
std::vector<float> logits_of(std::vector<double> probs) {
  std::vector<float> l;
  for (double p : probs) l.push_back(p > 0 ? static_cast<float>(std::log(p)) : -kInf);
  return l;
}

// The ids left unmasked.
std::vector<int32_t> kept(const std::vector<float>& logits) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < logits.size(); ++i)
    if (logits[i] != -kInf) ids.push_back(static_cast<int32_t>(i));
  return ids;
}

using Ids = std::vector<int32_t>;

TEST(SamplerSteps, ArgmaxTakesTheLowestIdAmongTies) {
  EXPECT_EQ(argmax(std::vector<float>{1, 3, 3, 2}), 1);
  EXPECT_EQ(argmax(std::vector<float>{-kInf, -5, -1, -1}), 2);
  EXPECT_THROW(argmax(std::vector<float>{-kInf, -kInf}), Error);
}

TEST(SamplerSteps, PenaltiesFollowVllm) {
  // Prompt {0, 1}; output 2, 2 (and 5, outside the row, is ignored).
  const Ids prompt = {0, 1};
  TokenHistory history(prompt);
  history.add_output(2);
  history.add_output(2);
  history.add_output(5);
  SamplingParams p;
  p.repetition_penalty = 2;
  p.presence_penalty = 0.5f;
  p.frequency_penalty = 0.25f;
  std::vector<float> l = {2, -2, 1, 0.5f};
  apply_penalties(l, history, p);
  EXPECT_FLOAT_EQ(l[0], 1);                            // positive: divided (prompt token)
  EXPECT_FLOAT_EQ(l[1], -4);                           // negative: multiplied (prompt token)
  EXPECT_FLOAT_EQ(l[2], 1 / 2.0f - 0.25f * 2 - 0.5f);  // repetition, then frequency + presence
  EXPECT_FLOAT_EQ(l[3], 0.5f);                         // never seen
}

TEST(SamplerSteps, PresenceAndFrequencyIgnorePromptTokens) {
  const Ids prompt = {0};
  TokenHistory history(prompt);
  SamplingParams p;
  p.presence_penalty = 1;
  p.frequency_penalty = 1;
  std::vector<float> l = {3, 3};
  apply_penalties(l, history, p);
  EXPECT_FLOAT_EQ(l[0], 3);
  history.add_output(1);
  history.add_output(1);
  history.add_output(1);
  apply_penalties(l, history, p);
  EXPECT_FLOAT_EQ(l[1], 3 - 1 - 3);
}

TEST(SamplerSteps, TemperatureDivides) {
  std::vector<float> l = {2, -4};
  apply_temperature(l, 0.5f);
  EXPECT_FLOAT_EQ(l[0], 4);
  EXPECT_FLOAT_EQ(l[1], -8);
}

TEST(SamplerSteps, MinPIsRelativeToTheMostProbableToken) {
  std::vector<float> l = logits_of({0.5, 0.3, 0.15, 0.05});
  apply_min_p(l, 0.2f);  // threshold 0.1
  EXPECT_EQ(kept(l), (Ids{0, 1, 2}));
  l = logits_of({0.5, 0.3, 0.15, 0.05});
  apply_min_p(l, 0.31f);  // threshold 0.155
  EXPECT_EQ(kept(l), (Ids{0, 1}));
  l = logits_of({0.5, 0.3, 0.15, 0.05});
  apply_min_p(l, 1.0f);  // only the maximum survives
  EXPECT_EQ(kept(l), (Ids{0}));
}

TEST(SamplerSteps, TopKKeepsTiesAtTheKthValue) {
  std::vector<float> l = {1, 5, 3, 5, 2};
  apply_top_k(l, 2);
  EXPECT_EQ(kept(l), (Ids{1, 3}));
  l = {1, 5, 3, 5, 2};
  apply_top_k(l, 3);
  EXPECT_EQ(kept(l), (Ids{1, 2, 3}));
  l = {1, 3, 3, 2};
  apply_top_k(l, 1);
  EXPECT_EQ(kept(l), (Ids{1, 2}));
  l = {1, 3, 3, 2};
  apply_top_k(l, 0);  // off
  EXPECT_EQ(kept(l), (Ids{0, 1, 2, 3}));
}

TEST(SamplerSteps, TopPKeepsTheSmallestSetReachingP) {
  const std::vector<double> probs = {0.1, 0.4, 0.3, 0.2};
  const auto top_p = [&](float p) {
    std::vector<float> l = logits_of(probs);
    apply_top_p(l, p);
    return kept(l);
  };
  EXPECT_EQ(top_p(0.3f), (Ids{1}));
  EXPECT_EQ(top_p(0.4f), (Ids{1}));         // 0.4 alone reaches it
  EXPECT_EQ(top_p(0.5f), (Ids{1, 2}));      // 0.4 + 0.3
  EXPECT_EQ(top_p(0.7f), (Ids{1, 2}));      // exactly reached
  EXPECT_EQ(top_p(0.71f), (Ids{1, 2, 3}));  // needs the 0.2
  EXPECT_EQ(top_p(0.95f), (Ids{0, 1, 2, 3}));
  EXPECT_EQ(top_p(1.0f), (Ids{0, 1, 2, 3}));
  // Equal probabilities: the lower ids come first.
  std::vector<float> flat = logits_of({0.25, 0.25, 0.25, 0.25});
  apply_top_p(flat, 0.5f);
  EXPECT_EQ(kept(flat), (Ids{0, 1}));
}

TEST(SamplerSteps, TopPMatchesAFullSortOnALargeVocabulary) {
  // Thousands of candidates: the kept set spans several rounds of the partial sort.
  std::vector<float> base(5000);
  uint64_t s = 99;
  for (float& l : base) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    l = static_cast<float>((s >> 33) % 4096) / 1024.0f;
  }
  for (float p : {0.05f, 0.5f, 0.9f, 0.999f}) {
    std::vector<float> l = base;
    apply_top_p(l, p);
    // Naive: sort everything, accumulate in order.
    std::vector<int32_t> order(base.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](int32_t a, int32_t b) { return base[a] != base[b] ? base[a] > base[b] : a < b; });
    double total = 0;
    for (float v : base) total += std::exp(double(v));
    double cumulative = 0;
    Ids expected;
    for (int32_t id : order) {
      expected.push_back(id);
      cumulative += std::exp(double(base[id])) / total;
      if (cumulative >= p) break;
    }
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(kept(l), expected) << "p=" << p;
  }
}

TEST(SamplerSteps, SampleAtIsTheInverseCdfInIdOrder) {
  const std::vector<float> l = logits_of({0.25, 0.5, 0.25});
  EXPECT_EQ(sample_at(l, 0.0), 0);
  EXPECT_EQ(sample_at(l, 0.24), 0);
  EXPECT_EQ(sample_at(l, 0.26), 1);
  EXPECT_EQ(sample_at(l, 0.74), 1);
  EXPECT_EQ(sample_at(l, 0.76), 2);
  EXPECT_EQ(sample_at(l, 0.9999999), 2);
  // Masked tokens have no interval.
  const std::vector<float> masked = {-kInf, 0, -kInf, 0, -kInf};
  EXPECT_EQ(sample_at(masked, 0.0), 1);
  EXPECT_EQ(sample_at(masked, 0.49), 1);
  EXPECT_EQ(sample_at(masked, 0.51), 3);
  EXPECT_EQ(sample_at(masked, 0.99999999), 3);
  EXPECT_THROW(sample_at(std::vector<float>{-kInf}, 0.5), Error);
}

TEST(SamplerSteps, LogprobsOfChosenAndTop) {
  const std::vector<float> l = {0.0f, static_cast<float>(std::log(3.0)), 0.0f};  // 1/5, 3/5, 1/5
  const SampleLogprobs lp = compute_logprobs(l, 2, 5);
  EXPECT_EQ(lp.chosen.token, 2);
  EXPECT_NEAR(lp.chosen.logprob, std::log(0.2), 1e-6);
  ASSERT_EQ(lp.top.size(), 3u);  // never more than the vocabulary
  EXPECT_EQ(lp.top[0].token, 1);
  EXPECT_NEAR(lp.top[0].logprob, std::log(0.6), 1e-6);
  EXPECT_EQ(lp.top[1].token, 0);  // tie with 2: lower id first
  EXPECT_EQ(lp.top[2].token, 2);
  EXPECT_TRUE(compute_logprobs(l, 0, 0).top.empty());
  EXPECT_THROW(compute_logprobs(l, 3, 1), Error);
}

TEST(SampleRngTest, SameSeedSameStreamAndUniform) {
  SampleRng a(42), b(42), c(43);
  bool differs = false;
  double sum = 0;
  for (int i = 0; i < 20000; ++i) {
    const double x = a.next_unit();
    EXPECT_EQ(x, b.next_unit());
    if (x != c.next_unit()) differs = true;
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    sum += x;
  }
  EXPECT_TRUE(differs);
  EXPECT_NEAR(sum / 20000, 0.5, 0.01);
}

TEST(SamplerTest, ValidatesEveryParameterByName) {
  const auto message = [](auto edit) {
    SamplingParams p;
    edit(p);
    try {
      validate_sampling_params(p);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message([](auto& p) { p.temperature = -1; }).find("temperature"), std::string::npos);
  EXPECT_NE(message([](auto& p) { p.top_p = 0; }).find("top_p"), std::string::npos);
  EXPECT_NE(message([](auto& p) { p.top_k = -2; }).find("top_k"), std::string::npos);
  EXPECT_NE(message([](auto& p) { p.min_p = 1.5f; }).find("min_p"), std::string::npos);
  EXPECT_NE(message([](auto& p) { p.repetition_penalty = 0; }).find("repetition_penalty"),
            std::string::npos);
  EXPECT_NE(message([](auto& p) { p.presence_penalty = 3; }).find("presence_penalty"),
            std::string::npos);
  EXPECT_NE(message([](auto& p) { p.frequency_penalty = -3; }).find("frequency_penalty"),
            std::string::npos);
  EXPECT_EQ(message([](auto& p) { p.top_k = -1; }), "accepted");
}

TEST(SamplerTest, GreedyIgnoresSeedAndFilters) {
  SamplingParams p;
  p.temperature = 0;
  p.top_k = 1;
  for (uint64_t seed : {1u, 2u, 3u}) {
    p.seed = seed;
    Sampler s(p, {});
    std::vector<float> l = {0.5f, 2.0f, 2.0f, 1.0f};
    EXPECT_EQ(s.sample(l).token, 1);
  }
}

TEST(SamplerTest, HistoryFeedsTheRepetitionPenalty) {
  SamplingParams p;
  p.temperature = 0;
  p.repetition_penalty = 2;
  Sampler s(p, {});
  const std::vector<float> base = {1.0f, 0.9f, 0.1f};
  std::vector<int32_t> picked;
  for (int i = 0; i < 3; ++i) {
    std::vector<float> l = base;
    picked.push_back(s.sample(l).token);
  }
  // 0 (1.0) → 1 (0.9 > 0.5) → 0 (0.5 > 0.45).
  EXPECT_EQ(picked, (Ids{0, 1, 0}));
}

TEST(SamplerTest, SeededDrawsAreReproducibleAndFollowTheDistribution) {
  SamplingParams p;
  p.temperature = 1;
  p.seed = 7;
  const std::vector<float> base = logits_of({0.2, 0.3, 0.5});
  const auto run = [&](uint64_t seed) {
    p.seed = seed;
    Sampler s(p, {});
    Ids out;
    for (int i = 0; i < 20000; ++i) {
      std::vector<float> l = base;
      out.push_back(s.sample(l).token);
    }
    return out;
  };
  const Ids a = run(7), b = run(7), c = run(8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (int32_t id = 0; id < 3; ++id) {
    const double share = std::count(a.begin(), a.end(), id) / 20000.0;
    EXPECT_NEAR(share, std::exp(base[id]), 0.015) << "token " << id;
  }
}

TEST(SamplerTest, FiltersApplyBeforeTheDraw) {
  SamplingParams p;
  p.temperature = 1;
  p.top_k = 2;
  p.seed = 3;
  Sampler s(p, {});
  for (int i = 0; i < 2000; ++i) {
    std::vector<float> l = logits_of({0.05, 0.4, 0.15, 0.4});
    const int32_t t = s.sample(l).token;
    ASSERT_TRUE(t == 1 || t == 3) << t;
  }
}

TEST(SamplerTest, RawAndProcessedLogprobs) {
  SamplingParams p;
  p.temperature = 0.5f;
  p.top_logprobs = 2;
  const std::vector<float> base = {0.0f, static_cast<float>(std::log(3.0))};
  {
    Sampler s(p, {});
    std::vector<float> l = base;
    const SampleResult r = s.sample(l, true);
    EXPECT_NEAR(r.logprobs.top[0].logprob, std::log(0.75), 1e-6);  // raw: 1/4, 3/4
    EXPECT_NEAR(r.logprobs.chosen.logprob, r.token == 1 ? std::log(0.75) : std::log(0.25), 1e-6);
  }
  p.processed_logprobs = true;
  {
    Sampler s(p, {});
    std::vector<float> l = base;
    const SampleResult r = s.sample(l, true);
    EXPECT_NEAR(r.logprobs.top[0].logprob, std::log(0.9), 1e-6);  // after T = 0.5: 1/10, 9/10
    EXPECT_NEAR(r.logprobs.top[1].logprob, std::log(0.1), 1e-6);
  }
}

TEST(SamplerTest, OverridesReplaceOnlyWhatIsSet) {
  SamplingParams defaults;
  defaults.temperature = 0.7f;
  defaults.top_k = 40;
  defaults.top_p = 0.95f;
  SamplingOverrides o;
  o.temperature = 0.0f;
  o.seed = 9;
  const SamplingParams p = apply_overrides(defaults, o);
  EXPECT_EQ(p.temperature, 0.0f);
  EXPECT_EQ(p.seed, 9u);
  EXPECT_EQ(p.top_k, 40);
  EXPECT_FLOAT_EQ(p.top_p, 0.95f);
}

TEST(SamplerTest, NanLogitIsAnError) {
  Sampler s(SamplingParams{}, {});
  std::vector<float> l = {0, std::nanf(""), 1};
  EXPECT_THROW(s.sample(l), Error);
}

}  // namespace
}  // namespace minimax

namespace minimax {
namespace {

TEST(TokenMask, ClearBitsBecomeMinusInfinity) {
  std::vector<float> logits(130, 1.0f);
  std::vector<uint64_t> allowed = {~uint64_t{0}, uint64_t{1} << 5};  // 0..63 and 69; 128+ masked
  apply_token_mask(logits, allowed);
  for (size_t t = 0; t < logits.size(); ++t)
    EXPECT_EQ(std::isinf(logits[t]), !(t < 64 || t == 69)) << t;
  EXPECT_EQ(argmax(logits), 0);
}

}  // namespace
}  // namespace minimax
