// Internals of the serving engine (runtime/engine.h), shared by engine.cc (threading, submission,
// lifetime) and engine_step.cc (one scheduling step and the per-token work). Not for callers.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "model/kv_cache.h"
#include "runtime/block_manager.h"
#include "runtime/engine.h"
#include "runtime/scheduler.h"
#include "runtime/spec/draft_head.h"
#include "runtime/spec/draft_policy.h"
#include "runtime/spec/drafter.h"
#include "runtime/stop_strings.h"
#include "text/detokenizer.h"
#include "text/grammar/grammar_matcher.h"

namespace minimax {

using EngineClock = std::chrono::steady_clock;

inline double seconds_between(EngineClock::time_point from, EngineClock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// One request from submission to finish; the scheduler sees its SchedSequence part.
struct ActiveRequest : SchedSequence {
  // `vocab` is needed only for a request with a constraint.
  ActiveRequest(EngineRequest request, KvBlockPool& kv_pool, const BpeTokenizer& tokenizer,
                std::shared_ptr<const TokenTrie> vocab);

  EngineRequest request;
  std::shared_ptr<RequestStream> stream;
  Sampler sampler;
  IncrementalDetokenizer detokenizer;  // special tokens kept: the parsers need the markers
  StopStringMatcher matcher;
  KvCache cache;  // paged view over the engine's kv_pool; its table follows `blocks`
  int64_t prompt_len = 0;
  int64_t generated = 0;
  // The request's grammar state (request.constraint); it masks tokens once `constraining`.
  std::unique_ptr<GrammarMatcher> grammar;
  bool constraining = false;
  // Prompt logprobs by position (0 stays nullopt); sent once with the first token.
  std::vector<std::optional<PromptLogprob>> prompt_logprobs;
  bool prompt_logprobs_sent = false;
  bool prefix_counted = false;  // prefix-cache query counted in the metrics
  // Speculative decoding (EngineOptions::speculative): the request's drafter and acceptance.
  std::unique_ptr<Drafter> drafter;
  std::unique_ptr<DraftPolicy> draft_policy;
  int64_t shadow_seen = 0;  // tokens already given to draft_policy's unverified proposal
  EngineClock::time_point arrival, last_token;
  std::optional<EngineClock::time_point> deadline;
  bool done = false;

  bool wants_prompt_logprobs() const {
    return request.prompt_logprobs >= 0 && !prompt_logprobs_sent;
  }
};

// The wake-up channel of the loop thread. Streams hold it weakly, so cancelling a stream that
// outlives the engine is harmless.
struct EngineSignal {
  std::mutex mutex;
  std::condition_variable cv;
  bool wake = false, stop = false, paused = false;
  bool parked = false;  // the loop is waiting because of a pause
  std::deque<std::unique_ptr<ActiveRequest>> incoming;
  int64_t scheduler_waiting = 0;  // mirror of the scheduler's queue for submit's bound
};

struct Engine::Impl {
  Impl(Model& model, const BpeTokenizer& tokenizer, EngineOptions options);

  // engine.cc
  void loop();
  void drop_cancelled_and_expired();
  void abort_all(std::string_view reason, const std::string& error);
  void update_gauges();

  // engine_step.cc
  // Runs one step; false when nothing was scheduled.
  bool step();
  void record_prompt_logprobs(ActiveRequest& r, int64_t position, std::span<const float> logits);
  // Speculative decoding: gives each decoding sequence the draft worth verifying in this step
  // (SchedSequence::draft), and after the forward emits the tokens of a chunk that carried one.
  void propose_drafts();
  void emit_verified(ActiveRequest& r, const ScheduledChunk& chunk, std::span<float> rows);
  // EAGLE-3: gives each sequence's drafter the target's taps of the positions this step ran.
  void hand_out_taps(const SchedulerStep& plan, std::span<const BatchSequence> batch);

  // engine_token.cc
  // Samples the next token of `r` (within its grammar's mask when constrained) from its logits row
  // and pushes it; finishes the request when a stop condition is met.
  void emit_token(ActiveRequest& r, std::span<float> logits, EngineEvent& event);
  // The steps of emit_token. Each returns false when it has finished the request.
  bool mask_logits(ActiveRequest& r, std::span<float> logits, EngineEvent& event,
                   EngineClock::time_point now);
  bool advance_grammar(ActiveRequest& r, int32_t token, EngineEvent& event);
  void count_token(ActiveRequest& r, EngineEvent& event, EngineClock::time_point now);
  // The token's text after the stop rules, added to `event`; the finish reason ("" = none).
  std::string_view add_output(ActiveRequest& r, SampleResult sampled, EngineEvent& event,
                              EngineClock::time_point now);
  // Ends `r` because its grammar is past a limit: the request's fault, a 4xx.
  void end_for_grammar(ActiveRequest& r, EngineEvent& event, const std::string& why);
  // Frees the request's blocks, pushes `event` with the finish, counts it.
  void finish(ActiveRequest& r, EngineEvent event, std::string_view reason);
  void fill_totals(const ActiveRequest& r, EngineEvent& event) const;
  void erase_done();
  // The vocabulary trie for constrained decoding, built on first use (any thread).
  std::shared_ptr<const TokenTrie> token_trie();

  Model& model;
  BpeTokenizer tokenizer;
  EngineOptions options;
  ServeMetrics metrics;
  std::unique_ptr<KvBlockPool> kv_pool;  // the KV memory (a "pool" alone is a ThreadPool)
  BlockManager blocks;
  Scheduler scheduler;
  std::shared_ptr<EngineSignal> signal;
  std::vector<std::unique_ptr<ActiveRequest>> active;  // loop thread only
  int64_t next_id = 0;
  int64_t steps_run = 0;  // steps that ran a forward pass (TokenOutput::step)
  std::shared_ptr<RecentOutputs> recent_outputs;  // suffix decoding's server-wide cache
  std::unique_ptr<StepCostModel> step_cost;       // set with options.speculative
  std::shared_ptr<Eagle3Head> draft_head;         // method eagle3: the head every drafter runs
  // eagle3 with prefix caching: taps of whole blocks, so that a prefix-cache hit does not leave
  // the head without the prefix's context (runtime/spec/tap_store.h).
  std::shared_ptr<TapStore> tap_store;
  std::thread thread;
  std::once_flag trie_once;
  std::shared_ptr<const TokenTrie> trie;
};

}  // namespace minimax
