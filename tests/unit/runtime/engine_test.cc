// The serving engine on real tiny M2 / M3 checkpoints: concurrent requests give exactly the
// tokens of the same requests run one at a time through the runtime Generator (also under
// preemption and with prefix-cache hits), cancellation frees blocks, timeouts, the queue bound,
// request validation, grammar constraints and prompt logprobs against a full forward.
#include "runtime/engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "checkpoint/tiny_checkpoint.h"
#include "checkpoint/tiny_config.h"
#include "engine_fixture.h"
#include "exploding_grammar.h"
#include "runtime/model_session.h"
#include "text/bpe_trainer.h"
#include "text/grammar/grammar_matcher.h"

namespace minimax {
namespace {
namespace fs = std::filesystem;
using namespace engine_test;

// The same request run alone through the runtime's generation loop on a contiguous cache.
GenerationResult run_alone(TinyModel& tiny_model, const EngineRequest& request) {
  ModelSession session(*tiny_model.model, 512);
  Generator generator(session, *tiny_model.tokenizer);
  return generator.generate(request.prompt, request.sampling, request.stop, {}, request.logprobs);
}

void expect_same_as_alone(TinyModel& tiny_model, const EngineRequest& request, const Collected& got,
                          const std::string& what) {
  const GenerationResult want = run_alone(tiny_model, request);
  EXPECT_EQ(got.tokens, want.tokens) << what;
  EXPECT_EQ(got.text, want.text) << what;
  EXPECT_EQ(got.finish_reason, std::string(finish_reason_name(want.finish))) << what;
  EXPECT_EQ(got.stop_string, want.stop_string) << what;
  EXPECT_EQ(got.stop_token, want.stop_token) << what;
  EXPECT_EQ(got.completion_tokens, static_cast<int64_t>(want.tokens.size())) << what;
}

EngineOptions small_options() {
  EngineOptions options;
  options.max_model_len = 256;
  options.max_num_seqs = 8;
  options.max_batched_tokens = 48;  // long prompts are prefilled in chunks
  options.kv_block_size = 16;
  options.kv_cache_blocks = 128;
  options.model_name = "tiny";
  return options;
}

// Eight requests of different lengths, greedy but for one seeded sample, some with stop
// strings, all submitted while the loop is paused so they meet in the same steps.
std::vector<EngineRequest> mixed_requests(int count) {
  std::vector<EngineRequest> requests;
  for (int i = 0; i < count; ++i) {
    EngineRequest request = greedy_request(prompt_ids(5 + 23 * i % 97, i), 6 + 5 * (i % 4));
    if (i == 3) {
      request.sampling.temperature = 0.9f;
      request.sampling.seed = 1234;
    }
    if (i % 3 == 1) request.stop.stop_strings = {"e", "th"};
    if (i == 5) request.logprobs = true, request.sampling.top_logprobs = 3;
    requests.push_back(std::move(request));
  }
  return requests;
}

class EngineTest : public ::testing::TestWithParam<Arch> {};

TEST_P(EngineTest, ConcurrentRequestsGiveTheTokensOfSequentialRuns) {
  TinyModel& t = tiny(GetParam());
  Engine engine(*t.model, *t.tokenizer, small_options());
  const std::vector<EngineRequest> requests = mixed_requests(8);
  engine.pause();
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (const EngineRequest& request : requests) streams.push_back(engine.submit(request));
  engine.resume();
  for (size_t i = 0; i < requests.size(); ++i) {
    const Collected got = collect(*streams[i]);
    EXPECT_EQ(got.prompt_tokens, static_cast<int64_t>(requests[i].prompt.size()));
    expect_same_as_alone(t, requests[i], got, "request " + std::to_string(i));
    if (requests[i].logprobs) {
      EXPECT_EQ(got.logprobs.size(), got.tokens.size());
    }
  }
  const ServeMetrics::Snapshot metrics = engine.metrics().snapshot();
  EXPECT_EQ(metrics.kv_blocks_used, 0);
  EXPECT_EQ(metrics.running, 0);
  EXPECT_EQ(metrics.finished.at("stop") + metrics.finished.at("length"), 8);
  EXPECT_EQ(metrics.ttft_count, 8u);
}

TEST_P(EngineTest, RequestsJoiningWhileOthersRunGiveTheSameTokens) {
  TinyModel& t = tiny(GetParam());
  EngineOptions options = small_options();
  options.max_num_seqs = 4;  // the later ones also wait for a slot
  Engine engine(*t.model, *t.tokenizer, options);
  const std::vector<EngineRequest> requests = mixed_requests(8);
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (size_t i = 0; i < 4; ++i) streams.push_back(engine.submit(requests[i]));
  EngineEvent first;
  ASSERT_TRUE(streams[0]->wait(first, std::chrono::seconds(60)));
  for (size_t i = 4; i < requests.size(); ++i) streams.push_back(engine.submit(requests[i]));
  for (size_t i = 0; i < requests.size(); ++i) {
    Collected got;
    const bool finished = i == 0 && absorb(got, first);  // its first event was read above
    if (!finished) got = collect(*streams[i], std::move(got));
    expect_same_as_alone(t, requests[i], got, "request " + std::to_string(i));
  }
  EXPECT_EQ(engine.metrics().snapshot().kv_blocks_used, 0);
}

TEST_P(EngineTest, PreemptionKeepsTheTokens) {
  TinyModel& t = tiny(GetParam());
  EngineOptions options = small_options();
  options.max_model_len = 96;
  options.kv_cache_blocks = 8;  // 128 slots for six requests that grow to 50..80 tokens
  options.prefix_caching = false;
  Engine engine(*t.model, *t.tokenizer, options);
  std::vector<EngineRequest> requests;
  for (int i = 0; i < 6; ++i) requests.push_back(greedy_request(prompt_ids(20 + 7 * i, i), 30));
  engine.pause();
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (const EngineRequest& request : requests) streams.push_back(engine.submit(request));
  engine.resume();
  for (size_t i = 0; i < requests.size(); ++i)
    expect_same_as_alone(t, requests[i], collect(*streams[i]), "request " + std::to_string(i));
  const ServeMetrics::Snapshot metrics = engine.metrics().snapshot();
  EXPECT_GT(metrics.preemptions, 0);
  EXPECT_EQ(metrics.kv_blocks_used, 0);
}

TEST_P(EngineTest, PrefixCacheHitIsCountedAndGivesTheSameOutput) {
  TinyModel& t = tiny(GetParam());
  Engine engine(*t.model, *t.tokenizer, small_options());
  const EngineRequest first = greedy_request(prompt_ids(70, 9), 12);
  const Collected a = collect(*engine.submit(first));
  EXPECT_EQ(a.cached_prompt_tokens, 0);
  // The same 70-token prompt: 4 full blocks (64 tokens) are reused, the rest is computed.
  const Collected b = collect(*engine.submit(first));
  EXPECT_EQ(b.cached_prompt_tokens, 64);
  EXPECT_EQ(b.tokens, a.tokens);
  EXPECT_EQ(b.text, a.text);
  expect_same_as_alone(t, first, b, "cached");
  // A prompt sharing its first 40 tokens reuses 2 blocks.
  EngineRequest third = first;
  for (size_t i = 40; i < third.prompt.size(); ++i) third.prompt[i] = (third.prompt[i] + 1) % 256;
  const Collected c = collect(*engine.submit(third));
  EXPECT_EQ(c.cached_prompt_tokens, 32);
  expect_same_as_alone(t, third, c, "partly cached");
  const ServeMetrics::Snapshot metrics = engine.metrics().snapshot();
  EXPECT_EQ(metrics.prefix_cache_queries, 3 * 70);
  EXPECT_EQ(metrics.prefix_cache_hits, 64 + 32);
  EXPECT_EQ(metrics.kv_blocks_used, 0);
}

// Issue 35 through the engine, under bf16x2 (which without batch invariance sends calls of 8+
// tokens to the batch GEMM): 16 greedy requests (prompts of 5 to 117 tokens, prefilled in chunks
// of at most 48 tokens per step; M3's longer ones past the MSA cut of 64) give the same tokens and
// the same logprob bits (the chosen token's and the top 5) sent one at a time, then 8 at a time
// (meeting in steps beside others, prefills beside decodes), then all again after their prefixes
// are cached.
TEST_P(EngineTest, BatchInvariantTokensAndLogprobsUnderAnyLoad) {
  TinyModel& t = tiny(GetParam(), /*invariant=*/true);
  std::vector<EngineRequest> requests;
  for (int i = 0; i < 16; ++i) {
    EngineRequest request = greedy_request(prompt_ids(5 + 37 * i % 113, i), 8 + 3 * (i % 4));
    request.logprobs = true;
    request.sampling.top_logprobs = 5;
    requests.push_back(std::move(request));
  }
  auto same = [](const Collected& want, const Collected& got, const std::string& what) {
    EXPECT_EQ(got.tokens, want.tokens) << what;
    ASSERT_EQ(got.logprobs.size(), want.logprobs.size()) << what;
    for (size_t k = 0; k < want.logprobs.size(); ++k) {
      const SampleLogprobs &a = want.logprobs[k], &b = got.logprobs[k];
      EXPECT_EQ(std::memcmp(&a.chosen.logprob, &b.chosen.logprob, sizeof(float)), 0)
          << what << " token " << k << ": " << a.chosen.logprob << " vs " << b.chosen.logprob;
      ASSERT_EQ(a.top.size(), b.top.size()) << what;
      for (size_t j = 0; j < a.top.size(); ++j) {
        EXPECT_EQ(a.top[j].token, b.top[j].token) << what << " token " << k << " top " << j;
        EXPECT_EQ(std::memcmp(&a.top[j].logprob, &b.top[j].logprob, sizeof(float)), 0)
            << what << " token " << k << " top " << j;
      }
    }
  };
  std::vector<Collected> one_at_a_time;
  {
    EngineOptions options = small_options();
    options.prefix_caching = false;
    Engine engine(*t.model, *t.tokenizer, options);
    for (const EngineRequest& request : requests)
      one_at_a_time.push_back(collect(*engine.submit(request)));
  }
  Engine engine(*t.model, *t.tokenizer, small_options());
  for (int round = 0; round < 2; ++round) {
    for (size_t begin = 0; begin < requests.size(); begin += 8) {
      engine.pause();
      std::vector<std::shared_ptr<RequestStream>> streams;
      for (size_t i = begin; i < begin + 8; ++i) streams.push_back(engine.submit(requests[i]));
      engine.resume();
      for (size_t i = begin; i < begin + 8; ++i) {
        const Collected got = collect(*streams[i - begin]);
        if (round == 1 && requests[i].prompt.size() >= 16) {
          EXPECT_GT(got.cached_prompt_tokens, 0) << "request " << i;
        }
        same(one_at_a_time[i], got,
             (round == 0 ? "8 at a time, request " : "cached, request ") + std::to_string(i));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Arch, EngineTest, ::testing::Values(Arch::kM2, Arch::kM3),
                         [](const ::testing::TestParamInfo<Arch>& info) {
                           return std::string(arch_name(info.param));
                         });

TEST(Engine, CancelFreesTheBlocks) {
  TinyModel& t = tiny(Arch::kM2);
  Engine engine(*t.model, *t.tokenizer, small_options());
  std::shared_ptr<RequestStream> stream = engine.submit(greedy_request(prompt_ids(40, 1), 200));
  EngineEvent event;
  ASSERT_TRUE(stream->wait(event, std::chrono::seconds(60)));
  EXPECT_FALSE(event.tokens.empty());
  engine.pause();  // no step runs until resume(): the request is mid-generation
  ASSERT_FALSE(stream->finished());
  EXPECT_GT(engine.metrics().snapshot().kv_blocks_used, 0);
  stream->cancel();
  stream->cancel();  // idempotent
  engine.resume();
  bool finished = event.finished;
  while (!finished && stream->wait(event, std::chrono::seconds(60))) finished = event.finished;
  ASSERT_TRUE(finished);
  EXPECT_EQ(event.finish_reason, "abort");
  EXPECT_LT(event.completion_tokens, 200);
  const ServeMetrics::Snapshot metrics = engine.metrics().snapshot();
  EXPECT_EQ(metrics.kv_blocks_used, 0);
  EXPECT_EQ(metrics.finished.at("abort"), 1);
  EXPECT_NE(
      engine.metrics().render_prometheus().find("minimax:kv_blocks_used{model_name=\"tiny\"} 0.0"),
      std::string::npos);
}

TEST(Engine, CancelWhileWaitingAndOnShutdown) {
  TinyModel& t = tiny(Arch::kM2);
  std::shared_ptr<RequestStream> kept;
  {
    Engine engine(*t.model, *t.tokenizer, small_options());
    engine.pause();
    std::shared_ptr<RequestStream> cancelled = engine.submit(greedy_request(prompt_ids(8, 2), 5));
    kept = engine.submit(greedy_request(prompt_ids(8, 3), 5));
    cancelled->cancel();
    engine.resume();
    const Collected got = collect(*cancelled);
    EXPECT_EQ(got.finish_reason, "abort");
    EXPECT_TRUE(got.tokens.empty());
    engine.pause();
    (void)engine.submit(greedy_request(prompt_ids(8, 4), 5));
  }  // destroyed with a request still queued
  EngineEvent event;
  bool finished = false;
  while (!finished && kept->wait(event, std::chrono::seconds(1))) finished = event.finished;
  EXPECT_TRUE(finished);
  kept->cancel();  // after the engine is gone: harmless
}

TEST(Engine, TimeoutFinishesTheRequest) {
  TinyModel& t = tiny(Arch::kM2);
  Engine engine(*t.model, *t.tokenizer, small_options());
  engine.pause();
  EngineRequest request = greedy_request(prompt_ids(10, 5), 50);
  request.timeout_seconds = 0.001;
  std::shared_ptr<RequestStream> stream = engine.submit(request);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the deadline
  engine.resume();
  const Collected got = collect(*stream);
  EXPECT_EQ(got.finish_reason, "timeout");
  EXPECT_TRUE(got.tokens.empty());
  EXPECT_EQ(engine.metrics().snapshot().kv_blocks_used, 0);
}

TEST(Engine, FullQueueThrowsEngineBusy) {
  TinyModel& t = tiny(Arch::kM2);
  EngineOptions options = small_options();
  options.max_waiting = 2;
  Engine engine(*t.model, *t.tokenizer, options);
  engine.pause();
  auto a = engine.submit(greedy_request(prompt_ids(8, 1), 3));
  auto b = engine.submit(greedy_request(prompt_ids(8, 2), 3));
  EXPECT_THROW(engine.submit(greedy_request(prompt_ids(8, 3), 3)), EngineBusy);
  engine.resume();
  EXPECT_EQ(collect(*a).tokens.size(), 3u);
  EXPECT_EQ(collect(*b).tokens.size(), 3u);
  // Room again once they ran.
  EXPECT_EQ(collect(*engine.submit(greedy_request(prompt_ids(8, 3), 3))).tokens.size(), 3u);
}

void expect_error_naming(Engine& engine, const EngineRequest& request, const std::string& name) {
  try {
    engine.submit(request);
    ADD_FAILURE() << "no error for " << name;
  } catch (const EngineBusy&) {
    ADD_FAILURE() << "EngineBusy for " << name;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

TEST(Engine, ValidatesRequests) {
  TinyModel& t = tiny(Arch::kM2);
  Engine engine(*t.model, *t.tokenizer, small_options());  // max_model_len 256
  expect_error_naming(engine, greedy_request({}, 5), "prompt");
  expect_error_naming(engine, greedy_request(prompt_ids(256, 1), 1), "prompt");
  expect_error_naming(engine, greedy_request({1, 2, 1 << 20}, 5), "prompt");
  expect_error_naming(engine, greedy_request(prompt_ids(200, 1), 57), "max_tokens");
  expect_error_naming(engine, greedy_request(prompt_ids(10, 1), 0), "max_tokens");
  EngineRequest bad_top_p = greedy_request(prompt_ids(10, 1), 5);
  bad_top_p.sampling.top_p = 2.0f;
  expect_error_naming(engine, bad_top_p, "top_p");
  EngineRequest bad_stop = greedy_request(prompt_ids(10, 1), 5);
  bad_stop.stop.stop_strings = {""};
  expect_error_naming(engine, bad_stop, "stop");
  // The largest request that fits is accepted.
  EXPECT_EQ(collect(*engine.submit(greedy_request(prompt_ids(200, 1), 56))).completion_tokens > 0,
            true);
}

// The message of the error constructing an engine with `options` throws ("" if none).
std::string construction_error(TinyModel& t, const EngineOptions& options) {
  try {
    Engine engine(*t.model, *t.tokenizer, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Engine, OptionsAreResolvedAndAPoolTooSmallIsRefused) {
  TinyModel& t = tiny(Arch::kM2);
  EngineOptions options = small_options();
  options.kv_cache_blocks = 4;  // 64 tokens < max_model_len 256
  EXPECT_EQ(construction_error(t, options).rfind("kv_cache_blocks: the KV pool holds 64 tokens", 0),
            0u);
  // Sized in bytes, the error names the size as the caller spelled it (serve: its flag).
  options.kv_cache_blocks = 0;
  const int64_t per_block =
      KvBlockPool::bytes_per_block(t.model->config(), 16, options.kv_cache_dtype);
  options.kv_cache_bytes = 4 * per_block + per_block / 2;
  options.kv_cache_bytes_name = "--kv-cache-memory 4.5blocks";
  options.max_model_len_name = "--max-model-len";
  const std::string error = construction_error(t, options);
  EXPECT_EQ(error.rfind("--kv-cache-memory 4.5blocks: the KV pool holds 64 tokens (4 blocks", 0),
            0u)
      << error;
  EXPECT_NE(error.find("less than --max-model-len 256; that needs 16 blocks, " +
                       std::to_string(16 * per_block) + " bytes"),
            std::string::npos)
      << error;
  options.kv_cache_bytes = per_block - 1;
  EXPECT_EQ(construction_error(t, options).rfind("--kv-cache-memory 4.5blocks: ", 0), 0u);
  options.kv_cache_blocks = 4;
  options.max_model_len = 0;  // the model's, clipped to the pool
  Engine engine(*t.model, *t.tokenizer, options);
  EXPECT_EQ(engine.options().max_model_len, 64);
  EXPECT_EQ(engine.options().kv_cache_blocks, 4);
  EXPECT_EQ(engine.metrics().snapshot().kv_blocks_total, 4);
}

TEST(Engine, AContextAboveTheModelsIsRefusedUnlessForced) {
  TinyModel& t = tiny(Arch::kM2);
  const int64_t model_context = t.model->config().max_position_embeddings;
  ASSERT_GT(model_context, 0);
  EngineOptions options = small_options();
  options.max_model_len = model_context + 16;
  options.kv_cache_blocks = (model_context + 16) / 16 + 1;
  options.max_model_len_name = "--max-model-len";
  options.allow_long_context_name = "--allow-long-max-model-len";
  const std::string error = construction_error(t, options);
  EXPECT_EQ(error.rfind("--max-model-len: " + std::to_string(model_context + 16) +
                            " is above the model's context of " + std::to_string(model_context),
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("--allow-long-max-model-len"), std::string::npos) << error;
  options.allow_long_context = true;
  Engine engine(*t.model, *t.tokenizer, options);
  EXPECT_EQ(engine.options().max_model_len, model_context + 16);
}

TEST(Engine, APoolTooSmallForAGivenContextNamesBothFixes) {
  TinyModel& t = tiny(Arch::kM2);
  EngineOptions options = small_options();  // max_model_len 256
  options.kv_cache_blocks = 4;
  const std::string error = construction_error(t, options);
  EXPECT_NE(error.find("give the KV cache that much memory, or lower max_model_len to 64"),
            std::string::npos)
      << error;
}

// "AB" then one to three digits: a grammar the tiny model would not follow by itself.
std::shared_ptr<const Grammar> ab_digits_grammar() {
  GrammarBuilder b;
  const int32_t digits = b.repeat("d", {b.byte_range('0', '9')}, 1, 3);
  return std::make_shared<const Grammar>(
      b.build(b.choice("root", {concat(b.literal("AB"), {GrammarBuilder::ref(digits)})})));
}

bool is_ab_digits(std::string_view text) {
  if (text.size() < 3 || text.size() > 5 || text.substr(0, 2) != "AB") return false;
  return std::all_of(text.begin() + 2, text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

TEST(Engine, ConstraintMasksTokensAfterTheTrigger) {
  TinyModel& t = tiny(Arch::kM2);
  Engine engine(*t.model, *t.tokenizer, small_options());
  const EngineRequest plain = greedy_request(prompt_ids(12, 6), 12);
  const Collected free_run = collect(*engine.submit(plain));
  ASSERT_GE(free_run.tokens.size(), 4u);
  ASSERT_FALSE(is_ab_digits(free_run.text));

  // From the first token, with no stop token: the complete sentence ends the request.
  EngineRequest from_start = plain;
  from_start.constraint = TokenConstraint{-1, ab_digits_grammar()};
  from_start.logprobs = true;
  const Collected a = collect(*engine.submit(from_start));
  EXPECT_TRUE(is_ab_digits(a.text)) << a.text;
  EXPECT_EQ(a.finish_reason, "stop");
  ASSERT_EQ(a.logprobs.size(), a.tokens.size());
  {  // logprobs see the mask (as vLLM's): the first token's is log-softmax over allowed tokens
    KvCache cache = t.model->new_cache(64);
    std::vector<int32_t> positions(plain.prompt.size());
    for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<int32_t>(i);
    std::vector<float> logits = t.model->forward(plain.prompt, positions, cache);
    GrammarMatcher matcher(ab_digits_grammar(), std::make_shared<const TokenTrie>(*t.tokenizer),
                           {});
    apply_token_mask(logits, matcher.allowed_tokens());
    EXPECT_NEAR(a.logprobs[0].chosen.logprob,
                compute_logprobs(logits, a.tokens[0], 0).chosen.logprob, 1e-4f);
    EXPECT_GT(a.logprobs[0].chosen.logprob, -20.0f);
  }

  // With a stop token: allowed only once the sentence is complete, and then the only choice.
  EngineRequest with_eos = from_start;
  with_eos.stop.stop_token_ids = {free_run.tokens[0]};
  const Collected e = collect(*engine.submit(with_eos));
  EXPECT_EQ(e.finish_reason, "stop");
  EXPECT_EQ(e.stop_token, free_run.tokens[0]);
  EXPECT_TRUE(is_ab_digits(e.text)) << e.text;

  // After a trigger: the free run's second token starts the constraint.
  const int32_t trigger = free_run.tokens[1];
  if (free_run.tokens[0] != trigger) {
    EngineRequest triggered = plain;
    triggered.constraint = TokenConstraint{trigger, ab_digits_grammar()};
    const Collected b = collect(*engine.submit(triggered));
    ASSERT_GE(b.tokens.size(), 3u);
    EXPECT_EQ(b.tokens[0], free_run.tokens[0]);
    EXPECT_EQ(b.tokens[1], trigger);
    const std::string head = t.tokenizer->decode(std::span<const int32_t>(b.tokens).first(2));
    EXPECT_TRUE(is_ab_digits(b.text.substr(head.size()))) << b.text;
  }
}

TEST(Engine, AGrammarPastItsLimitsEndsItsRequestOnlyAndTheOthersGoOn) {
  TinyModel& t = tiny(Arch::kM2);
  EngineOptions options = small_options();
  // No time limit: the automaton's stack limit ends the request, whatever the machine's speed
  // (under the sanitizers even the first mask can take longer than the time budget).
  options.grammar_mask_budget_ms = 0;
  Engine engine(*t.model, *t.tokenizer, options);
  const EngineRequest plain = greedy_request(prompt_ids(12, 6), 120);
  const Collected alone = collect(*engine.submit(plain));
  engine.pause();  // both in the same steps
  EngineRequest hostile = greedy_request(prompt_ids(10, 3), 200);
  hostile.constraint = TokenConstraint{-1, exploding_grammar()};
  std::shared_ptr<RequestStream> h = engine.submit(hostile);
  std::shared_ptr<RequestStream> p = engine.submit(plain);
  engine.resume();
  const Collected bad = collect(*h);
  EXPECT_EQ(bad.finish_reason, "error");
  EXPECT_EQ(bad.error.rfind("constraint: ", 0), 0u) << bad.error;
  EXPECT_NE(bad.error.find("more than 16384 stacks"), std::string::npos) << bad.error;
  EXPECT_LT(bad.tokens.size(), 200u);
  const Collected good = collect(*p);
  EXPECT_EQ(good.finish_reason, "length");
  EXPECT_EQ(good.tokens, alone.tokens);
  EXPECT_EQ(engine.metrics().snapshot().kv_blocks_used, 0);
}

TEST(Engine, AGrammarTooExpensiveForItsFirstMaskIsRefusedAtSubmit) {
  TinyModel& t = tiny(Arch::kM2);
  EngineOptions options = small_options();
  options.grammar_mask_budget_ms = 1e-9;  // any mask that builds a state runs past it
  Engine engine(*t.model, *t.tokenizer, options);
  EngineRequest request = greedy_request(prompt_ids(10, 3), 8);
  request.constraint = TokenConstraint{-1, ab_digits_grammar()};
  try {
    (void)engine.submit(request);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("constraint: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("first token mask"), std::string::npos) << e.what();
  }
  options.grammar_mask_budget_ms = 0;  // no limit
  Engine unlimited(*t.model, *t.tokenizer, options);
  EXPECT_TRUE(is_ab_digits(collect(*unlimited.submit(request)).text));
}

TEST(Engine, StopTokensAndStopStringsAsTheGeneratorAppliesThem) {
  TinyModel& t = tiny(Arch::kM2);
  Engine engine(*t.model, *t.tokenizer, small_options());
  const EngineRequest plain = greedy_request(prompt_ids(30, 7), 16);
  const Collected free_run = collect(*engine.submit(plain));
  ASSERT_EQ(free_run.tokens.size(), 16u);
  ASSERT_GE(free_run.text.size(), 6u);

  EngineRequest with_stop_token = plain;
  with_stop_token.stop.stop_token_ids = {free_run.tokens[5]};
  const Collected a = collect(*engine.submit(with_stop_token));
  EXPECT_EQ(a.finish_reason, "stop");
  EXPECT_EQ(a.stop_token, free_run.tokens[5]);
  EXPECT_LE(a.tokens.size(), 6u);
  expect_same_as_alone(t, with_stop_token, a, "stop token");

  // Two ASCII characters from the middle of the text (the tiny model's text is mostly bytes
  // that are not whole characters).
  size_t at = 2;
  while (at + 2 <= free_run.text.size() &&
         !(static_cast<unsigned char>(free_run.text[at]) < 0x80 &&
           static_cast<unsigned char>(free_run.text[at + 1]) < 0x80))
    ++at;
  ASSERT_LE(at + 2, free_run.text.size()) << free_run.text;
  EngineRequest with_stop_string = plain;
  with_stop_string.stop.stop_strings = {free_run.text.substr(at, 2)};
  const Collected b = collect(*engine.submit(with_stop_string));
  EXPECT_EQ(b.finish_reason, "stop");
  EXPECT_EQ(b.stop_string, with_stop_string.stop.stop_strings[0]);
  EXPECT_EQ(b.text.find(b.stop_string), std::string::npos);
  EXPECT_LE(b.text.size(), at);
  expect_same_as_alone(t, with_stop_string, b, "stop string");
}

TEST(Engine, PromptLogprobsMatchAFullForward) {
  TinyModel& t = tiny(Arch::kM2);
  EngineOptions options = small_options();
  options.max_batched_tokens = 16;  // the prompt runs in several chunks
  Engine engine(*t.model, *t.tokenizer, options);
  const std::vector<int32_t> prompt = prompt_ids(45, 8);
  // The prompt is cached first: a request with prompt logprobs must not read the cache.
  (void)collect(*engine.submit(greedy_request(prompt, 2)));
  EngineRequest request = greedy_request(prompt, 3);
  request.prompt_logprobs = 2;
  const Collected got = collect(*engine.submit(request));
  EXPECT_EQ(got.cached_prompt_tokens, 0);
  ASSERT_EQ(got.prompt_logprobs.size(), prompt.size());
  EXPECT_FALSE(got.prompt_logprobs[0].has_value());

  KvCache cache = t.model->new_cache(64);
  std::vector<int32_t> positions(prompt.size());
  for (size_t i = 0; i < prompt.size(); ++i) positions[i] = static_cast<int32_t>(i);
  const std::vector<float> logits =
      t.model->forward(prompt, positions, cache, LogitsFor::kAllTokens);
  const size_t vocab = t.model->config().vocab_size;
  for (size_t i = 1; i < prompt.size(); ++i) {
    ASSERT_TRUE(got.prompt_logprobs[i].has_value()) << i;
    const PromptLogprob& p = *got.prompt_logprobs[i];
    const std::span<const float> row(logits.data() + (i - 1) * vocab, vocab);
    const SampleLogprobs want = compute_logprobs(row, prompt[i], 2);
    EXPECT_EQ(p.token, prompt[i]);
    EXPECT_NEAR(p.logprob, want.chosen.logprob, 1e-4f) << i;
    int rank = 1;
    for (float l : row) rank += l > row[prompt[i]] ? 1 : 0;
    EXPECT_EQ(p.rank, rank) << i;
    ASSERT_EQ(p.top.size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(p.top[k].token, want.top[k].token) << i;
      EXPECT_NEAR(p.top[k].logprob, want.top[k].logprob, 1e-4f) << i;
    }
  }
  // The generated tokens are unaffected.
  expect_same_as_alone(t, request, got, "with prompt logprobs");
}

}  // namespace
}  // namespace minimax
