// The serving engine: one loop thread that runs continuous batching over a paged KV cache (vLLM
// V1's design). Requests join and leave at every step; each step schedules decodes and prompt
// chunks within a token budget (runtime/scheduler.h), runs them in one Model::forward_batch,
// samples every sequence with its own Sampler, detokenizes, applies the stop conditions and
// pushes the results to each request's RequestStream. KV blocks come from one pool with prefix
// caching (runtime/block_manager.h); when blocks run out the newest request is preempted and later
// recomputed, its output continuing seamlessly.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "model/model.h"
#include "runtime/generator.h"
#include "runtime/prefill_chunk.h"
#include "runtime/request_stream.h"
#include "runtime/sampler.h"
#include "runtime/serve_metrics.h"
#include "runtime/spec/speculative_config.h"
#include "text/bpe_tokenizer.h"
#include "text/grammar/grammar.h"

namespace minimax {

struct EngineOptions {
  int64_t max_model_len = 0;  // prompt + generated tokens per request; 0 = the model's
  int64_t max_num_seqs = 16;  // sequences running at once
  int64_t max_batched_tokens = kDefaultPrefillChunk;  // tokens per step (chunked prefill)
  int64_t kv_block_size = 16;
  int64_t kv_cache_blocks = 0;  // 0 = derive from kv_cache_bytes
  int64_t kv_cache_bytes = 256ll << 20;
  KvDtype kv_cache_dtype = KvDtype::kF32;  // element type of the pool (the CLI's auto too)
  int64_t max_waiting = 64;                // queue bound: submit throws EngineBusy beyond it
  bool prefix_caching = true;
  // CPU time of the engine thread one request's token mask may take in one step
  // (text/grammar/grammar_matcher.h): past it that request ends with an error at the step's
  // boundary and the others go on. The first mask is computed in submit(), off the loop, with
  // kFirstMaskBudgetFactor times as much; a grammar past that is refused there. 0 = no limit.
  double grammar_mask_budget_ms = 20;
  static constexpr double kFirstMaskBudgetFactor = 5;
  std::string model_name;  // metrics label
  // How a refused pool size is named in errors: a front end passes its own flag and the value as
  // the user spelled it (serve: "--kv-cache-memory 1GiB", "--max-model-len").
  std::string kv_cache_bytes_name = "kv_cache_bytes";
  std::string max_model_len_name = "max_model_len";
  // A max_model_len above the model's max_position_embeddings is refused unless this is set
  // (serve's --allow-long-max-model-len, named in the error).
  bool allow_long_context = false;
  std::string allow_long_context_name = "allow_long_context";
  // Draft-free speculative decoding (runtime/spec/): a decoding sequence carries draft tokens
  // from its context into a step and keeps the prefix the sampler confirms. Lossless only with
  // batch-invariant kernels, which the front ends turn on with it.
  std::optional<SpeculativeConfig> speculative;
};

// Grammar-constrained decoding (tool_choice required / named, response_format): once `trigger`
// has been sampled (or from the first token when trigger == -1), every token is drawn from those
// the grammar allows next (text/grammar/grammar_matcher.h), and a stop token only where the
// grammar's sentence is complete. Masked tokens are -inf before the sampler, so logprobs (raw or
// processed) see the mask, as in vLLM. A complete sentence with no stop token to end it (e.g.
// ignore_eos) finishes the request with "stop".
struct TokenConstraint {
  int32_t trigger = -1;
  std::shared_ptr<const Grammar> grammar;
};

struct EngineRequest {
  std::vector<int32_t> prompt;
  SamplingParams sampling;  // top_logprobs inside
  StopConditions stop;      // stop_token_ids, stop_strings, max_tokens
  bool logprobs = false;
  int prompt_logprobs = -1;    // -1 = off, else top-n per prompt position
  double timeout_seconds = 0;  // 0 = none; from submission to the finish
  std::optional<TokenConstraint> constraint;
};

// submit() when the waiting queue is full (the server answers 429 / 503).
class EngineBusy : public Error {
 public:
  using Error::Error;
};

class Engine {
 public:
  // Sizes the KV pool, checks that one request of max_model_len tokens fits it (Error naming
  // kv_cache_bytes / kv_cache_blocks otherwise) and starts the loop thread. `model` and
  // `tokenizer` must outlive the engine.
  Engine(Model& model, const BpeTokenizer& tokenizer, EngineOptions options);
  ~Engine();  // stops the loop, finishes open requests with "abort"
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates (prompt empty, ids outside the vocabulary or longer than max_model_len - 1 →
  // Error naming "prompt"; max_tokens <= 0 or prompt + max_tokens over max_model_len → Error
  // naming "max_tokens"; sampling parameters and stop strings as the runtime checks them);
  // throws EngineBusy when max_waiting requests are already waiting. A constrained request's
  // first token mask is computed here, on the caller's thread (Error naming "constraint" when it
  // runs past its budget, EngineOptions::grammar_mask_budget_ms).
  std::shared_ptr<RequestStream> submit(EngineRequest request);

  ServeMetrics& metrics();
  const EngineOptions& options() const;  // with max_model_len and kv_cache_blocks resolved

  // While paused the loop runs no step (submissions queue up, cancellations wait); pause()
  // returns once the loop has finished its current step. For tests that need several requests
  // to meet in one step, and for draining.
  void pause();
  void resume();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace minimax
