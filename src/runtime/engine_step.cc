// One engine step: schedule, one batched forward, then per sequence prompt logprobs and the next
// token (engine_token.cc).
#include <algorithm>

#include "base/error.h"
#include "runtime/engine_impl.h"

namespace minimax {
namespace {

ActiveRequest& as_request(SchedSequence* seq) { return static_cast<ActiveRequest&>(*seq); }

}  // namespace

void Engine::Impl::fill_totals(const ActiveRequest& r, EngineEvent& event) const {
  event.prompt_tokens = r.prompt_len;
  event.cached_prompt_tokens = std::max<int64_t>(r.cached_tokens, 0);
  event.completion_tokens = r.generated;
}

void Engine::Impl::finish(ActiveRequest& r, EngineEvent event, std::string_view reason) {
  if (r.done) return;
  r.done = true;
  // Blocks and metrics are updated before the consumer hears of the finish, so what it reads
  // next already shows them.
  scheduler.remove(&r);
  update_gauges();
  // vLLM's finished_reason labels: a timeout is an abort by the server.
  metrics.record_finish(reason == "timeout" ? "abort" : reason);
  metrics.observe_e2e_latency(seconds_between(r.arrival, EngineClock::now()));
  event.finished = true;
  event.finish_reason = std::string(reason);
  fill_totals(r, event);
  r.stream->push(std::move(event));
}

void Engine::Impl::erase_done() {
  std::erase_if(active, [](const std::unique_ptr<ActiveRequest>& r) { return r->done; });
}

void Engine::Impl::record_prompt_logprobs(ActiveRequest& r, int64_t position,
                                          std::span<const float> logits) {
  std::optional<PromptLogprob>& slot = r.prompt_logprobs[position];
  if (slot) return;  // computed before a preemption
  const int32_t token = r.tokens[position];
  SampleLogprobs computed = compute_logprobs(logits, token, r.request.prompt_logprobs);
  const float own = logits[token];
  const auto above = std::count_if(logits.begin(), logits.end(), [&](float l) { return l > own; });
  slot = PromptLogprob{token, computed.chosen.logprob, static_cast<int>(above) + 1,
                       std::move(computed.top)};
}

bool Engine::Impl::step() {
  const SchedulerStep plan = scheduler.schedule();
  if (!plan.preempted.empty()) metrics.add_preemptions(static_cast<int64_t>(plan.preempted.size()));
  for (SchedSequence* seq : plan.admitted) {
    ActiveRequest& r = as_request(seq);
    if (r.prefix_counted) continue;
    r.prefix_counted = true;
    if (options.prefix_caching && r.read_prefix_cache)
      metrics.add_prefix_cache(r.prompt_len, r.cached_tokens);
  }
  if (plan.empty()) return false;
  ++steps_run;

  std::vector<BatchSequence> batch(plan.chunks.size());
  std::vector<std::vector<int32_t>> positions(plan.chunks.size());
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    const ScheduledChunk& chunk = plan.chunks[i];
    ActiveRequest& r = as_request(chunk.seq);
    r.cache.set_block_table(r.blocks);
    r.cache.set_length(chunk.begin);
    positions[i].resize(chunk.count);
    for (int64_t t = 0; t < chunk.count; ++t)
      positions[i][t] = static_cast<int32_t>(chunk.begin + t);
    // Row t of a chunk predicts position begin + t + 1: all rows are wanted while they reach
    // prompt positions whose logprobs are still missing.
    const bool all_rows = r.wants_prompt_logprobs() && chunk.begin + 1 < r.prompt_len;
    batch[i] = BatchSequence{std::span<const int32_t>(r.tokens).subspan(chunk.begin, chunk.count),
                             positions[i], &r.cache,
                             all_rows ? LogitsFor::kAllTokens : LogitsFor::kLastToken};
  }

  std::vector<float> logits;
  try {
    logits = model.forward_batch(batch);
  } catch (const Error& e) {
    for (const ScheduledChunk& chunk : plan.chunks) {
      EngineEvent event;
      event.error = e.what();
      finish(as_request(chunk.seq), std::move(event), "error");
    }
    erase_done();
    return true;
  }
  scheduler.commit(plan);

  const auto vocab = static_cast<size_t>(model.config().vocab_size);
  size_t row = 0;
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    const ScheduledChunk& chunk = plan.chunks[i];
    ActiveRequest& r = as_request(chunk.seq);
    const size_t rows = batch[i].which == LogitsFor::kAllTokens ? chunk.count : 1;
    // A failure here (e.g. a row of NaN logits) ends this request only.
    try {
      if (batch[i].which == LogitsFor::kAllTokens) {
        for (int64_t t = 0; t < chunk.count; ++t) {
          const int64_t predicted = chunk.begin + t + 1;
          if (predicted < r.prompt_len)
            record_prompt_logprobs(
                r, predicted, std::span<const float>(logits.data() + (row + t) * vocab, vocab));
        }
      }
      if (chunk.samples()) {
        EngineEvent event;
        emit_token(r, std::span<float>(logits.data() + (row + rows - 1) * vocab, vocab), event);
      }
    } catch (const Error& e) {
      EngineEvent event;
      event.error = e.what();
      finish(r, std::move(event), "error");
    }
    row += rows;
  }
  erase_done();
  return true;
}

}  // namespace minimax
