// The generation loop over scripted and noisy logits: EOS, stop strings across tokens, max tokens,
// context limit, cancellation, UTF-8 held across tokens, seeded determinism.
#include "runtime/generator.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "runtime_fixture.h"

namespace minimax {
namespace {

using runtime_test::byte_ids;
using runtime_test::byte_tokenizer;
using runtime_test::NoisySource;
using runtime_test::ScriptedSource;

int vocab() { return byte_tokenizer().vocab_size(); }
int32_t eos() { return *byte_tokenizer().token_id("[e~["); }

SamplingParams greedy() {
  SamplingParams p;
  p.temperature = 0;
  return p;
}

struct Outcome {
  GenerationResult result;
  std::vector<GenerationEvent> events;
  std::string streamed;
};

Outcome run_generation(LogitsSource& source, const StopConditions& stop,
                       const SamplingParams& params = greedy(), int cancel_after = -1) {
  Generator generator(source, byte_tokenizer());
  Outcome r;
  const std::vector<int32_t> prompt = byte_ids("Q:");
  r.result = generator.generate(prompt, params, stop, [&](const GenerationEvent& e) {
    r.events.push_back(e);
    r.streamed += e.text;
    return cancel_after < 0 || e.index < cancel_after;
  });
  return r;
}

TEST(GeneratorTest, StopsAtEosWithoutItsText) {
  std::vector<int32_t> script = byte_ids("Hi!");
  script.push_back(eos());
  script.push_back('x');
  ScriptedSource source(script, vocab());
  StopConditions stop;
  stop.stop_token_ids = {eos()};
  const Outcome r = run_generation(source, stop);
  EXPECT_EQ(r.result.finish, FinishReason::kStop);
  EXPECT_EQ(r.result.stop_token, eos());
  EXPECT_EQ(r.result.text, "Hi!");
  EXPECT_EQ(r.streamed, "Hi!");
  EXPECT_EQ(r.result.tokens.size(), 4u);
  EXPECT_TRUE(r.events.back().last);
  // The prompt, then every generated token but the EOS was fed back.
  EXPECT_EQ(source.fed, byte_ids("Q:Hi!"));
  EXPECT_EQ(source.prefills, 1);
  EXPECT_EQ(r.result.stats.decode_steps, 3);
}

TEST(GeneratorTest, StopStringAcrossTokensIsNeitherShownNorFollowed) {
  ScriptedSource source(byte_ids("Hello world, again"), vocab());
  StopConditions stop;
  stop.stop_strings = {"o wor"};
  const Outcome r = run_generation(source, stop);
  EXPECT_EQ(r.result.finish, FinishReason::kStop);
  EXPECT_EQ(r.result.stop_string, "o wor");
  EXPECT_EQ(r.result.text, "Hell");
  EXPECT_EQ(r.streamed, "Hell");
  EXPECT_EQ(r.result.tokens, byte_ids("Hello wor"));  // generation ended at the match
  // "o" was held back while it could start the stop string.
  EXPECT_EQ(r.events[4].text, "");
}

TEST(GeneratorTest, MaxTokensGivesLengthAndReleasesHeldText) {
  ScriptedSource source(byte_ids("abcxy"), vocab());
  StopConditions stop;
  stop.stop_strings = {"xyz"};
  stop.max_tokens = 5;
  const Outcome r = run_generation(source, stop);
  EXPECT_EQ(r.result.finish, FinishReason::kLength);
  EXPECT_EQ(r.result.tokens.size(), 5u);
  EXPECT_EQ(r.result.text, "abcxy");
  EXPECT_EQ(r.streamed, "abcxy");
  EXPECT_EQ(r.result.stats.generated_tokens, 5);
}

TEST(GeneratorTest, SplitCharacterIsHeldUntilComplete) {
  ScriptedSource source(byte_ids("é"), vocab());  // two byte tokens
  StopConditions stop;
  stop.max_tokens = 2;
  const Outcome r = run_generation(source, stop);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].text, "");
  EXPECT_EQ(r.events[1].text, "é");
}

TEST(GeneratorTest, EosAfterAnIncompleteCharacterFlushesIt) {
  std::vector<int32_t> script = {0xC3, eos()};
  ScriptedSource source(script, vocab());
  StopConditions stop;
  stop.stop_token_ids = {eos()};
  EXPECT_EQ(run_generation(source, stop).result.text, "\xEF\xBF\xBD");
}

TEST(GeneratorTest, ContextCapacityEndsWithLength) {
  // Prompt of 2 in a context of 5: 3 more tokens can be fed, so 4 can be sampled.
  ScriptedSource source(byte_ids("abcdefgh"), vocab(), 5);
  StopConditions stop;
  stop.max_tokens = 100;
  const Outcome r = run_generation(source, stop);
  EXPECT_EQ(r.result.finish, FinishReason::kLength);
  EXPECT_EQ(r.result.text, "abcd");
  EXPECT_LE(source.fed.size(), 5u);
}

TEST(GeneratorTest, CallbackCanCancel) {
  ScriptedSource source(byte_ids("abcdef"), vocab());
  StopConditions stop;
  const Outcome r = run_generation(source, stop, greedy(), 1);
  EXPECT_EQ(r.result.finish, FinishReason::kCancelled);
  EXPECT_EQ(r.result.tokens.size(), 2u);
}

TEST(GeneratorTest, RejectsBadRequests) {
  ScriptedSource source(byte_ids("a"), vocab(), 3);
  Generator g(source, byte_tokenizer());
  StopConditions stop;
  EXPECT_THROW(g.generate({}, greedy(), stop), Error);
  const std::vector<int32_t> long_prompt = byte_ids("abcd");
  EXPECT_THROW(g.generate(long_prompt, greedy(), stop), Error);
  stop.max_tokens = 0;
  const std::vector<int32_t> prompt = byte_ids("a");
  EXPECT_THROW(g.generate(prompt, greedy(), stop), Error);
  stop.max_tokens = 1;
  stop.stop_strings = {""};
  EXPECT_THROW(g.generate(prompt, greedy(), stop), Error);
}

TEST(GeneratorTest, SameSeedSameTokensOtherSeedOtherTokens) {
  SamplingParams p;
  p.temperature = 1;
  p.top_p = 0.95f;
  StopConditions stop;
  stop.max_tokens = 40;
  const auto tokens = [&](uint64_t seed) {
    p.seed = seed;
    NoisySource source(vocab());
    return run_generation(source, stop, p).result.tokens;
  };
  EXPECT_EQ(tokens(11), tokens(11));
  EXPECT_NE(tokens(11), tokens(12));
  EXPECT_EQ(tokens(11).size(), 40u);
}

TEST(GeneratorTest, LogprobsAreReportedWhenAsked) {
  ScriptedSource source(byte_ids("ab"), vocab());
  Generator g(source, byte_tokenizer());
  StopConditions stop;
  stop.max_tokens = 2;
  SamplingParams p = greedy();
  p.top_logprobs = 3;
  std::vector<GenerationEvent> events;
  const std::vector<int32_t> prompt = byte_ids("Q");
  g.generate(
      prompt, p, stop,
      [&](const GenerationEvent& e) {
        events.push_back(e);
        return true;
      },
      true);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(events[0].has_logprobs);
  EXPECT_EQ(events[0].logprobs.chosen.token, 'a');
  EXPECT_GT(events[0].logprobs.chosen.logprob, -1e-3);  // a clear argmax: probability ~1
  EXPECT_EQ(events[0].logprobs.top.size(), 3u);
  EXPECT_EQ(events[0].logprobs.top[0].token, 'a');
}

}  // namespace
}  // namespace minimax
