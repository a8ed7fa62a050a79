// Speculative decoding in the generation loop: with drafts verified in one pass and rejected ones
// rolled back, greedy and seeded sampled outputs, logprobs and stop rules equal the plain loop's,
// over a source whose logits depend on the whole history (a rollback that leaves one stale token
// changes every later row).
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "base/error.h"
#include "runtime/generator.h"
#include "runtime/spec/speculative_stepper.h"
#include "runtime_fixture.h"

namespace minimax {
namespace {

using runtime_test::byte_ids;
using runtime_test::byte_tokenizer;

// A "model" that tends to copy: after token t, the token that followed t's previous occurrence
// gets a large logit, and every logit has noise hashed from the whole history.
class CopyingSource : public LogitsSource {
 public:
  CopyingSource(int vocab, float copy_bias) : vocab_(vocab), copy_bias_(copy_bias) {}
  std::vector<float> prefill(std::span<const int32_t> prompt) override {
    held_.assign(prompt.begin(), prompt.end());
    return row();
  }
  std::vector<float> decode(int32_t token) override {
    held_.push_back(token);
    ++forwards;
    return row();
  }
  std::vector<float> decode_all(std::span<const int32_t> tokens) override {
    std::vector<float> rows;
    for (int32_t t : tokens) {
      held_.push_back(t);
      std::vector<float> r = row();
      rows.insert(rows.end(), r.begin(), r.end());
    }
    ++forwards;
    return rows;
  }
  void truncate(int64_t length) override {
    ASSERT_LE(length, static_cast<int64_t>(held_.size()));
    held_.resize(static_cast<size_t>(length));
  }
  int64_t capacity() const override { return capacity_tokens; }

  int64_t capacity_tokens = 1 << 20;
  int forwards = 0;

 private:
  std::vector<float> row() const {
    uint64_t h = 1469598103934665603ull;
    for (int32_t t : held_) h = (h ^ static_cast<uint32_t>(t)) * 1099511628211ull;
    std::vector<float> logits(static_cast<size_t>(vocab_));
    for (int i = 0; i < vocab_; ++i) {
      uint64_t x = h + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(i + 1);
      x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ull;
      logits[static_cast<size_t>(i)] = static_cast<float>((x >> 40) & 0xffff) / 65536.0f;
    }
    const int32_t last = held_.back();
    for (size_t i = held_.size() - 1; i-- > 0;) {
      if (held_[i] == last) {
        logits[static_cast<size_t>(held_[i + 1])] += copy_bias_;
        break;
      }
    }
    return logits;
  }
  int vocab_;
  float copy_bias_;
  std::vector<int32_t> held_;
};

SpeculativeConfig always_verify(DraftMethod method = DraftMethod::kNgram, int k = 6) {
  SpeculativeConfig c;
  c.method = method;
  c.num_speculative_tokens = k;
  c.prompt_lookup_min = 1;
  c.prompt_lookup_max = 4;
  c.adaptive = false;
  return c;
}

struct Outcome {
  GenerationResult result;
  std::vector<GenerationEvent> events;
  int forwards = 0;
};

Outcome generate(const std::optional<SpeculativeConfig>& spec, const SamplingParams& sampling,
                 const StopConditions& stop, float copy_bias = 6.0f, bool logprobs = false) {
  CopyingSource source(byte_tokenizer().vocab_size(), copy_bias);
  Generator generator(source, byte_tokenizer());
  if (spec) generator.enable_speculation(*spec, StepCostModel(64, 8, 0.9));
  Outcome run;
  const std::vector<int32_t> prompt =
      byte_ids("int add(int a, int b) { return a + b; }\nint add(int a, int b) {");
  run.result = generator.generate(
      prompt, sampling, stop,
      [&](const GenerationEvent& e) {
        run.events.push_back(e);
        return true;
      },
      logprobs);
  run.forwards = source.forwards;
  return run;
}

SamplingParams greedy() {
  SamplingParams p;
  p.temperature = 0;
  return p;
}

StopConditions max_tokens(int n) {
  StopConditions stop;
  stop.max_tokens = n;
  return stop;
}

TEST(SpeculativeGeneratorTest, GreedyOutputEqualsThePlainLoopInFewerPasses) {
  for (DraftMethod method : {DraftMethod::kNgram, DraftMethod::kSuffix}) {
    const Outcome plain = generate(std::nullopt, greedy(), max_tokens(120));
    const Outcome spec = generate(always_verify(method), greedy(), max_tokens(120));
    EXPECT_EQ(spec.result.tokens, plain.result.tokens) << draft_method_name(method);
    EXPECT_EQ(spec.result.text, plain.result.text);
    EXPECT_GT(spec.result.stats.spec_drafts, 0);
    EXPECT_GT(spec.result.stats.spec_accepted_tokens, 0);
    EXPECT_LE(spec.result.stats.spec_accepted_tokens, spec.result.stats.spec_draft_tokens);
    EXPECT_LT(spec.forwards, plain.forwards) << "accepted drafts save forward passes";
    EXPECT_EQ(spec.result.stats.decode_steps, spec.forwards);
  }
}

TEST(SpeculativeGeneratorTest, SeededSamplingAndLogprobsEqualThePlainLoop) {
  // A weak copy bias: drafts are often rejected, so rollbacks happen.
  SamplingParams sampled;
  sampled.temperature = 1.0f;
  sampled.seed = 1234;
  sampled.top_logprobs = 3;
  for (float bias : {1.5f, 4.0f}) {
    const Outcome plain = generate(std::nullopt, sampled, max_tokens(150), bias, true);
    const Outcome spec = generate(always_verify(), sampled, max_tokens(150), bias, true);
    ASSERT_EQ(spec.result.tokens, plain.result.tokens) << "bias " << bias;
    ASSERT_EQ(spec.events.size(), plain.events.size());
    for (size_t i = 0; i < spec.events.size(); ++i) {
      EXPECT_EQ(spec.events[i].logprobs.chosen.logprob, plain.events[i].logprobs.chosen.logprob);
      ASSERT_EQ(spec.events[i].logprobs.top.size(), plain.events[i].logprobs.top.size());
      for (size_t j = 0; j < spec.events[i].logprobs.top.size(); ++j)
        EXPECT_EQ(spec.events[i].logprobs.top[j].token, plain.events[i].logprobs.top[j].token);
    }
    EXPECT_LT(spec.result.stats.spec_accepted_tokens, spec.result.stats.spec_draft_tokens)
        << "some drafts were rejected and rolled back";
  }
}

TEST(SpeculativeGeneratorTest, StopRulesCutInsideAVerifiedDraft) {
  StopConditions stop = max_tokens(37);
  stop.stop_strings = {"return a"};
  const Outcome plain = generate(std::nullopt, greedy(), stop);
  const Outcome spec = generate(always_verify(), greedy(), stop);
  EXPECT_EQ(spec.result.text, plain.result.text);
  EXPECT_EQ(spec.result.tokens, plain.result.tokens);
  EXPECT_EQ(spec.result.finish, plain.result.finish);
  // max_tokens in the middle of an accepted draft.
  for (int n : {1, 2, 5, 23}) {
    const Outcome capped = generate(always_verify(), greedy(), max_tokens(n));
    EXPECT_EQ(capped.result.tokens.size(), static_cast<size_t>(n));
    EXPECT_EQ(capped.result.finish, FinishReason::kLength);
  }
}

TEST(SpeculativeGeneratorTest, DraftsStayWithinTheContext) {
  CopyingSource source(byte_tokenizer().vocab_size(), 6.0f);
  const std::vector<int32_t> prompt = byte_ids("abcabcabcabc");
  source.capacity_tokens = static_cast<int64_t>(prompt.size()) + 9;
  Generator generator(source, byte_tokenizer());
  generator.enable_speculation(always_verify(), StepCostModel(64, 8, 0.9));
  const GenerationResult r = generator.generate(prompt, greedy(), max_tokens(100));
  EXPECT_EQ(r.finish, FinishReason::kLength);
  EXPECT_EQ(r.tokens.size(), 10u);  // the last sampled token is never fed
}

TEST(SpeculativeGeneratorTest, UnprofitableDraftsAreNotVerified) {
  // Every step costs as if it read all 64 experts from 2 tokens on, and drafts are unproven:
  // the adaptive policy verifies nothing at first; the output is the same either way.
  SpeculativeConfig adaptive = always_verify();
  adaptive.adaptive = true;
  CopyingSource source(byte_tokenizer().vocab_size(), 0.0f);  // no copying: drafts fail
  Generator generator(source, byte_tokenizer());
  StepCostModel cost(64, 8, 0.99);
  cost.record(1, 0.01);
  for (int n = 2; n <= 7; ++n) cost.record(n, 0.08);
  generator.enable_speculation(adaptive, cost);
  const GenerationResult r = generator.generate(byte_ids("xyzxyzxyzxyz"), greedy(), max_tokens(60));
  EXPECT_EQ(r.stats.spec_drafts, 0);
  EXPECT_EQ(r.stats.decode_steps, 59);
}

TEST(SpeculativeGeneratorTest, SourcesThatCannotRollBackAreNamed) {
  runtime_test::NoisySource source(byte_tokenizer().vocab_size());
  Generator generator(source, byte_tokenizer());
  generator.enable_speculation(always_verify(DraftMethod::kNgram, 4), StepCostModel(0, 0, 0));
  SamplingParams sampled;
  sampled.seed = 3;
  try {
    // NoisySource's default decode_all works; a rejected draft needs truncate().
    generator.generate(byte_ids("aaaaaaaaaaaa"), sampled, max_tokens(64));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("roll back"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace minimax

namespace minimax {
namespace {

// Logits that depend on the position only: the distribution of the first generated token is
// softmax(kFirst) whatever was drafted.
class FixedSource : public LogitsSource {
 public:
  static constexpr float kFirst[4] = {1.0f, 0.2f, -0.5f, 0.7f};
  std::vector<float> prefill(std::span<const int32_t> prompt) override {
    held_ = static_cast<int64_t>(prompt.size());
    return row();
  }
  std::vector<float> decode(int32_t) override {
    ++held_;
    return row();
  }
  void truncate(int64_t length) override { held_ = length; }
  int64_t capacity() const override { return 1 << 20; }

 private:
  std::vector<float> row() const {
    std::vector<float> logits(byte_tokenizer().vocab_size(), -1e30f);
    for (int i = 0; i < 4; ++i) logits['a' + i] = kFirst[i] + 0.1f * static_cast<float>(held_ % 3);
    return logits;
  }
  int64_t held_ = 0;
};

TEST(SpeculativeSamplingTest, TokensFollowTheTargetDistributionWhateverTheDraft) {
  // The prompt "...ab" drafts "c" after every "b" (prompt lookup): a draft that is sometimes right.
  // Over 4000 seeds the second generated token (the first one checked against a draft) must
  // follow softmax of its row; a chi-square test with 3 degrees of freedom at p = 0.001 (16.27).
  const std::vector<int32_t> prompt = byte_ids("abcabcabcab");
  std::array<int, 4> first{}, second{};
  for (uint64_t seed = 0; seed < 4000; ++seed) {
    FixedSource source;
    Generator generator(source, byte_tokenizer());
    generator.enable_speculation(always_verify(DraftMethod::kNgram, 4), StepCostModel(0, 0, 0));
    SamplingParams sampling;
    sampling.temperature = 1.0f;
    sampling.seed = seed;
    const GenerationResult r = generator.generate(prompt, sampling, max_tokens(2));
    ASSERT_EQ(r.tokens.size(), 2u);
    ++first[static_cast<size_t>(r.tokens[0] - 'a')];
    ++second[static_cast<size_t>(r.tokens[1] - 'a')];
  }
  const auto chi_square = [](const std::array<int, 4>& counts, int64_t position) {
    double z = 0, p[4];
    for (int i = 0; i < 4; ++i) z += p[i] = std::exp(FixedSource::kFirst[i] + 0.1 * (position % 3));
    double chi = 0;
    for (int i = 0; i < 4; ++i) {
      const double expected = 4000 * p[i] / z;
      chi += (counts[static_cast<size_t>(i)] - expected) *
             (counts[static_cast<size_t>(i)] - expected) / expected;
    }
    return chi;
  };
  const auto n = static_cast<int64_t>(prompt.size());
  EXPECT_LT(chi_square(first, n), 16.27);
  EXPECT_LT(chi_square(second, n + 1), 16.27);
}

}  // namespace
}  // namespace minimax
