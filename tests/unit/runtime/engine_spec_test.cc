// Speculative decoding in the serving engine, on real tiny M2 / M3 checkpoints with batch-invariant
// kernels: 8 concurrent streams (decodes beside prefills, drafts beside plain decodes) give the
// plain engine's tokens and logprob bits, greedy and seeded, with a pool small enough to preempt;
// verify steps are counted in the metrics under vLLM's names.
#include <gtest/gtest.h>

#include <cstring>

#include "engine_fixture.h"
#include "text/grammar/grammar_matcher.h"

namespace minimax {
namespace {
using namespace engine_test;

EngineOptions options_with(std::optional<SpeculativeConfig> spec, int64_t blocks = 128) {
  EngineOptions options;
  options.max_model_len = 256;
  options.max_num_seqs = 8;
  options.max_batched_tokens = 48;
  options.kv_block_size = 16;
  options.kv_cache_blocks = blocks;
  options.model_name = "tiny";
  options.speculative = std::move(spec);
  return options;
}

SpeculativeConfig verify_every_draft(DraftMethod method) {
  SpeculativeConfig c;
  c.method = method;
  c.num_speculative_tokens = 8;
  c.prompt_lookup_min = 1;
  c.prompt_lookup_max = 3;
  c.adaptive = false;  // verify whatever is proposed: the tests want rollbacks
  return c;
}

// Copy-task prompts: a short run repeated, so that drafts exist from the first step.
std::vector<EngineRequest> copy_requests(bool sampled) {
  std::vector<EngineRequest> requests;
  for (int i = 0; i < 8; ++i) {
    std::vector<int32_t> run = prompt_ids(6 + i % 5, i);
    std::vector<int32_t> prompt;
    for (int r = 0; r < 3 + i % 3; ++r) prompt.insert(prompt.end(), run.begin(), run.end());
    EngineRequest request = greedy_request(std::move(prompt), 24 + 5 * i);
    request.logprobs = true;
    request.sampling.top_logprobs = 3;
    if (sampled && i % 2 == 1) {
      request.sampling.temperature = 0.9f;
      request.sampling.seed = 1000 + i;
    }
    requests.push_back(std::move(request));
  }
  return requests;
}

std::vector<Collected> run_all(Engine& engine, const std::vector<EngineRequest>& requests) {
  engine.pause();
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (const EngineRequest& request : requests) streams.push_back(engine.submit(request));
  engine.resume();
  std::vector<Collected> out;
  for (auto& stream : streams) out.push_back(collect(*stream));
  return out;
}

void expect_same(const std::vector<Collected>& want, const std::vector<Collected>& got,
                 const std::string& what) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].tokens, want[i].tokens) << what << " request " << i;
    EXPECT_EQ(got[i].text, want[i].text) << what << " request " << i;
    EXPECT_EQ(got[i].finish_reason, want[i].finish_reason) << what << " request " << i;
    ASSERT_EQ(got[i].logprobs.size(), want[i].logprobs.size()) << what << " request " << i;
    for (size_t k = 0; k < want[i].logprobs.size(); ++k) {
      const float a = want[i].logprobs[k].chosen.logprob, b = got[i].logprobs[k].chosen.logprob;
      EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << what << " request " << i << " token " << k;
    }
  }
}

class EngineSpeculativeTest : public ::testing::TestWithParam<Arch> {};

TEST_P(EngineSpeculativeTest, OutputsEqualThePlainEngine) {
  TinyModel& t = tiny(GetParam(), /*invariant=*/true);
  for (bool sampled : {false, true}) {
    const std::vector<EngineRequest> requests = copy_requests(sampled);
    Engine plain_engine(*t.model, *t.tokenizer, options_with(std::nullopt));
    const std::vector<Collected> plain = run_all(plain_engine, requests);
    for (DraftMethod method : {DraftMethod::kNgram, DraftMethod::kSuffix}) {
      const std::string what =
          std::string(draft_method_name(method)) + (sampled ? " sampled" : " greedy");
      Engine engine(*t.model, *t.tokenizer, options_with(verify_every_draft(method)));
      expect_same(plain, run_all(engine, requests), what);
      // Again, with the suffix cache holding the first round's outputs and prefixes cached.
      expect_same(plain, run_all(engine, requests), what + ", second round");
      const ServeMetrics::Snapshot m = engine.metrics().snapshot();
      EXPECT_GT(m.spec.num_drafts, 0) << what;
      EXPECT_LE(m.spec.num_accepted_tokens, m.spec.num_draft_tokens) << what;
      const std::string text = engine.metrics().render_prometheus();
      EXPECT_NE(text.find("vllm:spec_decode_num_drafts_total{model_name=\"tiny\"} " +
                          std::to_string(m.spec.num_drafts)),
                std::string::npos)
          << text;
      EXPECT_NE(text.find("vllm:spec_decode_num_accepted_tokens_total"), std::string::npos);
      EXPECT_NE(text.find("vllm:spec_decode_num_draft_tokens_total"), std::string::npos);
    }
  }
}

TEST_P(EngineSpeculativeTest, PreemptionAndASmallPoolKeepTheOutputs) {
  TinyModel& t = tiny(GetParam(), /*invariant=*/true);
  const std::vector<EngineRequest> requests = copy_requests(false);
  Engine plain_engine(*t.model, *t.tokenizer, options_with(std::nullopt));
  const std::vector<Collected> plain = run_all(plain_engine, requests);
  // 24 blocks of 16 for 8 sequences of up to 100 tokens: drafts must shrink, sequences preempt.
  Engine engine(*t.model, *t.tokenizer,
                options_with(verify_every_draft(DraftMethod::kNgram), /*blocks=*/24));
  expect_same(plain, run_all(engine, requests), "small pool");
  EXPECT_GT(engine.metrics().snapshot().spec.num_drafts, 0);
}

TEST(EngineSpeculative, AcceptedDraftsOfARepeatingOutputSaveSteps) {
  // The tiny random model's greedy output falls into a loop: once it does, drafts from its own
  // output are right, and the request takes fewer steps than tokens.
  TinyModel& t = tiny(Arch::kM2, /*invariant=*/true);
  EngineRequest request = greedy_request(prompt_ids(12, 3), 120);
  Engine plain_engine(*t.model, *t.tokenizer, options_with(std::nullopt));
  const Collected plain = collect(*plain_engine.submit(request));
  Engine engine(*t.model, *t.tokenizer, options_with(verify_every_draft(DraftMethod::kNgram)));
  const Collected spec = collect(*engine.submit(request));
  EXPECT_EQ(spec.tokens, plain.tokens);
  const ServeMetrics::Snapshot m = engine.metrics().snapshot();
  EXPECT_GT(m.spec.num_accepted_tokens, 0)
      << "no draft of a " << plain.tokens.size() << "-token greedy output was right";
}

TEST_P(EngineSpeculativeTest, DraftsAreCutWhereTheyLeaveTheGrammar) {
  // The grammar allows one string, ten '7's, and the vocabulary spells it one byte token at a
  // time, so each position has one allowed token. The prompt repeats "7q": a draft looked up in
  // it runs "q7q7..." after a 7. Cut where it leaves the grammar, every verified draft token is
  // the forced one and is accepted; a 'q' carried into a verify step would be refused there.
  TinyModel& t = tiny(GetParam(), /*invariant=*/true);
  const std::vector<int32_t> seven = t.tokenizer->encode("7"), q = t.tokenizer->encode("q");
  ASSERT_EQ(seven.size(), 1u);
  ASSERT_EQ(q.size(), 1u);
  GrammarBuilder b;
  auto grammar =
      std::make_shared<const Grammar>(b.build(b.choice("root", {b.literal("7777777777")})));
  {
    GrammarMatcher m(grammar, std::make_shared<const TokenTrie>(*t.tokenizer), {});
    int allowed = 0;
    for (int32_t id = 0; id < t.tokenizer->vocab_size(); ++id)
      allowed += bitmask_test(m.allowed_tokens(), id) ? 1 : 0;
    ASSERT_EQ(allowed, 1) << "the vocabulary has a token of several 7s";
  }
  std::vector<int32_t> prompt;
  for (int i = 0; i < 8; ++i) prompt.insert(prompt.end(), {seven[0], q[0]});
  EngineRequest request = greedy_request(prompt, 16);
  request.constraint = TokenConstraint{-1, grammar};
  request.logprobs = true;
  Engine plain_engine(*t.model, *t.tokenizer, options_with(std::nullopt));
  const std::vector<Collected> plain = run_all(plain_engine, {request});
  ASSERT_EQ(plain[0].text, "7777777777");
  for (DraftMethod method : {DraftMethod::kNgram, DraftMethod::kSuffix}) {
    const std::string what(draft_method_name(method));
    Engine engine(*t.model, *t.tokenizer, options_with(verify_every_draft(method)));
    expect_same(plain, run_all(engine, {request}), what);
    const ServeMetrics::Snapshot m = engine.metrics().snapshot();
    EXPECT_GT(m.spec.num_draft_tokens, 0) << what;
    EXPECT_EQ(m.spec.num_accepted_tokens, m.spec.num_draft_tokens) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Arch, EngineSpeculativeTest, ::testing::Values(Arch::kM2, Arch::kM3),
                         [](const ::testing::TestParamInfo<Arch>& info) {
                           return std::string(arch_name(info.param));
                         });

}  // namespace
}  // namespace minimax
