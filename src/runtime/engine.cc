// The serving engine's lifetime, submission and loop thread (runtime/engine.h); the step itself is
// in engine_step.cc.
#include <algorithm>

#include "base/error.h"
#include "base/log.h"
#include "runtime/engine_impl.h"
#include "runtime/spec/model_step_cost.h"

namespace minimax {
namespace {

// Fills in what the options leave to the model and checks them. A max_model_len left at 0 is
// the model's, clipped to what the KV pool holds; one given explicitly must fit the KV pool, or a
// lone request could never finish.
EngineOptions resolve_options(const Model& model, EngineOptions options) {
  const ModelConfig& config = model.config();
  if (options.kv_block_size <= 0) fail("kv_block_size: must be > 0, got {}", options.kv_block_size);
  if (options.max_num_seqs <= 0) fail("max_num_seqs: must be > 0, got {}", options.max_num_seqs);
  if (options.max_batched_tokens <= 0)
    fail("max_batched_tokens: must be > 0, got {}", options.max_batched_tokens);
  if (options.max_waiting < 0) fail("max_waiting: must be >= 0, got {}", options.max_waiting);
  if (options.max_model_len < 0) fail("max_model_len: must be >= 0, got {}", options.max_model_len);
  if (options.kv_cache_blocks < 0)
    fail("kv_cache_blocks: must be >= 0, got {}", options.kv_cache_blocks);
  std::string size_source = "kv_cache_blocks";
  const int64_t per_block =
      KvBlockPool::bytes_per_block(config, options.kv_block_size, options.kv_cache_dtype);
  if (options.kv_cache_blocks == 0) {
    options.kv_cache_blocks = options.kv_cache_bytes / per_block;
    size_source = options.kv_cache_bytes_name;
    if (options.kv_cache_blocks <= 0)
      fail("{}: {} bytes hold no block of {} tokens ({} bytes)", size_source,
           options.kv_cache_bytes, options.kv_block_size, per_block);
  }
  const int64_t pool_tokens = options.kv_cache_blocks * options.kv_block_size;
  const auto blocks_for = [&](int64_t tokens) {
    return (tokens + options.kv_block_size - 1) / options.kv_block_size;
  };
  if (options.max_model_len == 0) {
    if (config.max_position_embeddings <= 0)
      fail("{}: not given and the model's max_position_embeddings is unset",
           options.max_model_len_name);
    options.max_model_len = std::min(config.max_position_embeddings, pool_tokens);
    if (options.max_model_len < config.max_position_embeddings)
      log_warn(
          "{} lowered to {} tokens, what the KV pool holds ({}: {} blocks of {} tokens, {} bytes "
          "each); the model's context of {} needs {} blocks, {} bytes: give more memory to the KV "
          "cache, or {} to choose the context yourself",
          options.max_model_len_name, options.max_model_len, size_source, options.kv_cache_blocks,
          options.kv_block_size, per_block, config.max_position_embeddings,
          blocks_for(config.max_position_embeddings),
          blocks_for(config.max_position_embeddings) * per_block, options.max_model_len_name);
  } else if (options.max_model_len > pool_tokens) {
    fail(
        "{}: the KV pool holds {} tokens ({} blocks of {} tokens, {} bytes each), less than {} "
        "{}; that needs {} blocks, {} bytes: give the KV cache that much memory, or lower {} to "
        "{}",
        size_source, pool_tokens, options.kv_cache_blocks, options.kv_block_size, per_block,
        options.max_model_len_name, options.max_model_len, blocks_for(options.max_model_len),
        blocks_for(options.max_model_len) * per_block, options.max_model_len_name, pool_tokens);
  }
  if (config.max_position_embeddings > 0 &&
      options.max_model_len > config.max_position_embeddings && !options.allow_long_context)
    fail(
        "{}: {} is above the model's context of {} tokens (max_position_embeddings), where its "
        "positions were never trained; lower it, or force it with {}",
        options.max_model_len_name, options.max_model_len, config.max_position_embeddings,
        options.allow_long_context_name);
  if (options.max_model_len < 2)
    fail("max_model_len: {} leaves no room for a prompt and a token", options.max_model_len);
  return options;
}

void validate(const EngineRequest& request, const EngineOptions& options, int vocab) {
  const auto prompt_len = static_cast<int64_t>(request.prompt.size());
  if (prompt_len == 0) fail("prompt: no tokens");
  for (size_t i = 0; i < request.prompt.size(); ++i)
    if (request.prompt[i] < 0 || request.prompt[i] >= vocab)
      fail("prompt: token id {} at index {} is outside the vocabulary of {}", request.prompt[i], i,
           vocab);
  if (prompt_len > options.max_model_len - 1)
    fail("prompt: {} tokens leave no room to generate within max_model_len {}", prompt_len,
         options.max_model_len);
  const int64_t max_tokens = request.stop.max_tokens;
  if (max_tokens <= 0) fail("max_tokens: must be > 0, got {}", max_tokens);
  if (prompt_len + max_tokens > options.max_model_len)
    fail("max_tokens: {} prompt tokens + max_tokens {} exceed max_model_len {}", prompt_len,
         max_tokens, options.max_model_len);
  validate_sampling_params(request.sampling);
  if (request.sampling.top_logprobs < 0)
    fail("top_logprobs: must be >= 0, got {}", request.sampling.top_logprobs);
  if (request.prompt_logprobs < -1)
    fail("prompt_logprobs: must be >= 0 (or -1 for off), got {}", request.prompt_logprobs);
  if (!(request.timeout_seconds >= 0))
    fail("timeout_seconds: must be >= 0, got {}", request.timeout_seconds);
  if (request.constraint) {
    if (!request.constraint->grammar) fail("constraint: no grammar");
    if (request.constraint->trigger < -1 || request.constraint->trigger >= vocab)
      fail("constraint: trigger {} is outside the vocabulary of {}", request.constraint->trigger,
           vocab);
  }
}

// The grammar's first mask (of its start state, where constraining begins), computed before the
// request joins the loop: a grammar whose very first states are too expensive never costs the
// shared step anything. The mask stays cached for the step that needs it.
void warm_first_mask(GrammarMatcher& grammar, double budget_ms) {
  auto deadline = GrammarMatcher::Clock::time_point::max();
  const double first_ms = budget_ms * EngineOptions::kFirstMaskBudgetFactor;
  if (budget_ms > 0)
    deadline =
        GrammarMatcher::Clock::now() + std::chrono::duration_cast<GrammarMatcher::Clock::duration>(
                                           std::chrono::duration<double, std::milli>(first_ms));
  try {
    grammar.allowed_tokens(deadline);
  } catch (const GrammarWorkExceeded&) {
    fail(
        "constraint: the grammar's first token mask took more than {} ms ({} x the per-step "
        "limit grammar_mask_budget_ms); the grammar is too expensive to run",
        first_ms, EngineOptions::kFirstMaskBudgetFactor);
  } catch (const Error& e) {
    fail("constraint: {}", e.what());
  }
}

}  // namespace

ActiveRequest::ActiveRequest(EngineRequest req, KvBlockPool& kv_pool, const BpeTokenizer& tokenizer,
                             std::shared_ptr<const TokenTrie> vocab)
    : request(std::move(req)),
      sampler(request.sampling, request.prompt),
      detokenizer(tokenizer, /*skip_special=*/false),
      matcher(request.stop.stop_strings),
      cache(kv_pool) {
  tokens = request.prompt;
  prompt_len = static_cast<int64_t>(tokens.size());
  read_prefix_cache = request.prompt_logprobs < 0;
  if (request.constraint) {
    grammar = std::make_unique<GrammarMatcher>(request.constraint->grammar, std::move(vocab),
                                               request.stop.stop_token_ids);
    constraining = request.constraint->trigger == -1;
  }
  if (request.prompt_logprobs >= 0) prompt_logprobs.resize(prompt_len);
}

Engine::Impl::Impl(Model& model_, const BpeTokenizer& tokenizer_, EngineOptions options_)
    : model(model_),
      tokenizer(tokenizer_),
      options(resolve_options(model_, std::move(options_))),
      metrics(options.model_name),
      kv_pool(model.new_kv_pool(options.kv_cache_blocks, options.kv_block_size,
                                options.kv_cache_dtype)),
      blocks(options.kv_cache_blocks, options.kv_block_size, options.prefix_caching),
      scheduler(blocks, options.max_num_seqs, options.max_batched_tokens),
      signal(std::make_shared<EngineSignal>()) {
  metrics.set_kv_blocks(0, blocks.num_blocks());
  if (options.speculative) {
    step_cost = std::make_unique<StepCostModel>(step_cost_model_for(model));
    draft_head = load_draft_head(model, *options.speculative);
    if (draft_head && options.prefix_caching)
      tap_store = std::make_shared<TapStore>(draft_head->tap_width(), options.kv_block_size,
                                             TapStore::kServerBytes);
    if (options.speculative->method == DraftMethod::kSuffix)
      recent_outputs =
          std::make_shared<RecentOutputs>(options.speculative->suffix_max_cached_requests);
  }
}

std::shared_ptr<const TokenTrie> Engine::Impl::token_trie() {
  std::call_once(trie_once, [&] { trie = std::make_shared<const TokenTrie>(tokenizer); });
  return trie;
}

void Engine::Impl::update_gauges() {
  int64_t incoming = 0;
  {
    std::lock_guard<std::mutex> lock(signal->mutex);
    signal->scheduler_waiting = static_cast<int64_t>(scheduler.waiting().size());
    incoming = static_cast<int64_t>(signal->incoming.size());
  }
  metrics.set_requests(static_cast<int64_t>(scheduler.running().size()),
                       static_cast<int64_t>(scheduler.waiting().size()) + incoming);
  metrics.set_kv_blocks(blocks.num_used(), blocks.num_blocks());
}

void Engine::Impl::drop_cancelled_and_expired() {
  const auto now = EngineClock::now();
  for (auto& r : active) {
    if (r->done) continue;
    if (r->stream->cancelled()) {
      finish(*r, EngineEvent{}, "abort");
    } else if (r->deadline && now >= *r->deadline) {
      finish(*r, EngineEvent{}, "timeout");
    }
  }
  erase_done();
}

void Engine::Impl::abort_all(std::string_view reason, const std::string& error) {
  for (auto& r : active) {
    if (r->done) continue;
    EngineEvent event;
    event.error = error;
    finish(*r, std::move(event), reason);
  }
  erase_done();
}

void Engine::Impl::loop() {
  for (;;) {
    std::deque<std::unique_ptr<ActiveRequest>> arrived;
    {
      std::unique_lock<std::mutex> lock(signal->mutex);
      for (;;) {
        if (signal->stop) break;
        if (signal->paused) {
          signal->parked = true;  // pause() returns once it sees this
          signal->cv.notify_all();
          signal->cv.wait(lock);
          continue;
        }
        signal->parked = false;
        if (signal->wake || !signal->incoming.empty() || !active.empty()) break;
        signal->cv.wait(lock);
      }
      if (signal->stop) break;
      signal->wake = false;
      arrived.swap(signal->incoming);
    }
    for (auto& r : arrived) {
      scheduler.add(r.get());
      active.push_back(std::move(r));
    }
    try {
      drop_cancelled_and_expired();
      const bool ran = step();
      if (!ran && !active.empty()) {
        // Nothing fits right now (cannot happen with a KV pool that holds max_model_len, which
        // the constructor checks); wait for a change instead of spinning.
        std::unique_lock<std::mutex> lock(signal->mutex);
        signal->cv.wait_for(lock, std::chrono::milliseconds(20));
      }
    } catch (const std::exception& e) {
      log_warn("engine: step failed, ending its requests: {}", e.what());
      abort_all("error", e.what());
    }
    update_gauges();
  }
  // Shutdown: everything still open ends with "abort".
  {
    std::lock_guard<std::mutex> lock(signal->mutex);
    for (auto& r : signal->incoming) active.push_back(std::move(r));
    signal->incoming.clear();
  }
  abort_all("abort", "");
  update_gauges();
}

Engine::Engine(Model& model, const BpeTokenizer& tokenizer, EngineOptions options)
    : impl_(std::make_unique<Impl>(model, tokenizer, std::move(options))) {
  impl_->thread = std::thread([impl = impl_.get()] { impl->loop(); });
}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(impl_->signal->mutex);
    impl_->signal->stop = true;
  }
  impl_->signal->cv.notify_all();
  impl_->thread.join();
}

std::shared_ptr<RequestStream> Engine::submit(EngineRequest request) {
  validate(request, impl_->options, impl_->model.config().vocab_size);
  const EngineClock::time_point arrival = EngineClock::now();
  std::shared_ptr<const TokenTrie> vocab;
  if (request.constraint) vocab = impl_->token_trie();
  auto r = std::make_unique<ActiveRequest>(std::move(request), *impl_->kv_pool, impl_->tokenizer,
                                           std::move(vocab));
  r->arrival = arrival;
  if (impl_->options.speculative) {
    r->drafter = std::make_unique<Drafter>(*impl_->options.speculative, impl_->recent_outputs,
                                           impl_->draft_head, impl_->tap_store);
    r->draft_policy = std::make_unique<DraftPolicy>(*impl_->options.speculative);
  }
  if (r->grammar) warm_first_mask(*r->grammar, impl_->options.grammar_mask_budget_ms);
  if (r->request.timeout_seconds > 0)
    r->deadline = arrival + std::chrono::duration_cast<EngineClock::duration>(
                                std::chrono::duration<double>(r->request.timeout_seconds));
  std::weak_ptr<EngineSignal> weak = impl_->signal;
  r->stream = std::make_shared<RequestStream>([weak] {
    if (auto signal = weak.lock()) {
      {
        std::lock_guard<std::mutex> lock(signal->mutex);
        signal->wake = true;
      }
      signal->cv.notify_all();
    }
  });
  std::shared_ptr<RequestStream> stream = r->stream;
  {
    std::lock_guard<std::mutex> lock(impl_->signal->mutex);
    EngineSignal& s = *impl_->signal;
    const int64_t waiting = static_cast<int64_t>(s.incoming.size()) + s.scheduler_waiting;
    if (waiting >= impl_->options.max_waiting)
      throw EngineBusy(fmt::format("engine: {} requests are waiting (max_waiting {}); retry later",
                                   waiting, impl_->options.max_waiting));
    r->id = impl_->next_id++;
    s.incoming.push_back(std::move(r));
  }
  impl_->signal->cv.notify_all();
  return stream;
}

ServeMetrics& Engine::metrics() { return impl_->metrics; }

const EngineOptions& Engine::options() const { return impl_->options; }

void Engine::pause() {
  std::unique_lock<std::mutex> lock(impl_->signal->mutex);
  impl_->signal->paused = true;
  impl_->signal->cv.notify_all();
  impl_->signal->cv.wait(lock, [&] { return impl_->signal->parked || impl_->signal->stop; });
}

void Engine::resume() {
  {
    std::lock_guard<std::mutex> lock(impl_->signal->mutex);
    impl_->signal->paused = false;
  }
  impl_->signal->cv.notify_all();
}

}  // namespace minimax
