// The channel between the engine loop and one request's consumer (an HTTP handler): the engine
// pushes generated tokens, prompt logprobs and the finish; the consumer waits for them, merged
// into one event per wait, and may cancel (e.g. when its client disconnects).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/sampler.h"

namespace minimax {

// One generated token as the consumer sees it.
struct TokenOutput {
  int32_t token = 0;
  // Text that became final with this token (special tokens spelled out, so the parsers see the
  // markers). May be empty (an incomplete UTF-8 character or a possible stop string is held
  // back) or hold text of earlier tokens; the concatenation over a request is its output text.
  std::string text;
  bool has_logprobs = false;
  SampleLogprobs logprobs;
  // When it was sampled, and the number of the engine step that ran it (tokens of one step share
  // it): what throughput measurements count, whenever the consumer happens to wake up.
  std::chrono::steady_clock::time_point time;
  int64_t step = 0;
};

// Logprob of prompt token i (i >= 1) given tokens [0, i), from the raw logits.
struct PromptLogprob {
  int32_t token = 0;
  float logprob = 0;
  int rank = 0;  // 1 + the number of vocabulary entries with a strictly larger logprob
  std::vector<TokenLogprob> top;  // the n most probable, descending, ties to the lower id
};

// What happened since the last wait().
struct EngineEvent {
  std::vector<TokenOutput> tokens;
  // Once, before (or with) the first token, when the request asked for prompt logprobs: one
  // entry per prompt position, position 0 is nullopt.
  std::vector<std::optional<PromptLogprob>> prompt_logprobs;
  bool finished = false;
  std::string finish_reason;  // "stop" | "length" | "abort" | "timeout" | "error"
  std::string stop_string;    // the stop string that ended it (not part of any text)
  int32_t stop_token = -1;    // the stop token id that ended it
  std::string error;          // set with finish_reason "error"
  // With "error": the request itself is at fault (its grammar past a limit), not the server, so a
  // front end answers 4xx, not 5xx.
  bool request_error = false;
  // Totals so far (final in the finished event).
  int64_t prompt_tokens = 0, cached_prompt_tokens = 0, completion_tokens = 0;
};

class RequestStream {
 public:
  // `wake_engine` is called (without the stream's lock held) by cancel(), so that an idle
  // engine loop notices.
  explicit RequestStream(std::function<void()> wake_engine = {});
  RequestStream(const RequestStream&) = delete;
  RequestStream& operator=(const RequestStream&) = delete;

  // Blocks until there is something new or `timeout` passes (returns false, `event` untouched).
  // On true, `event` is replaced by everything pushed since the previous wait, merged. Once the
  // finished event has been returned, later calls return false at once.
  bool wait(EngineEvent& event, std::chrono::milliseconds timeout);
  // Idempotent; the engine drops the request at its next step, frees its KV blocks and finishes
  // the stream with "abort" (unless it had already finished).
  void cancel();
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  // Whether the finished event has been pushed (not necessarily consumed yet).
  bool finished() const;

  // ---- Engine side ----
  // Merges `event` into what the consumer has not seen yet and wakes it. Pushes after the
  // finished event are ignored.
  void push(EngineEvent event);

 private:
  std::function<void()> wake_engine_;
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  EngineEvent pending_;
  bool has_pending_ = false;
  bool finish_pushed_ = false;
  bool finish_delivered_ = false;
};

}  // namespace minimax
