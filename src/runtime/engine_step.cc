// One engine step: schedule, one batched forward, then per sequence prompt logprobs, sampling
// (masked by the request's grammar when constrained), detokenization, stop conditions and the push
// to its stream.
#include <algorithm>

#include "base/error.h"
#include "runtime/engine_impl.h"

namespace minimax {
namespace {

double seconds_between(EngineClock::time_point from, EngineClock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

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

void Engine::Impl::emit_token(ActiveRequest& r, std::span<float> logits, EngineEvent& event) {
  const EngineClock::time_point now = EngineClock::now();
  const EngineRequest& request = r.request;
  // A grammar past its limits ends its own request as the request's fault (a 4xx).
  auto grammar_failed = [&](const std::string& message) {
    event.error = "constraint: " + message;
    event.request_error = true;
    finish(r, std::move(event), "error");
  };
  if (r.constraining) {
    // Mask work is bounded per step, and never runs past the request's own deadline.
    if (r.deadline && now >= *r.deadline) return finish(r, std::move(event), "timeout");
    auto deadline = GrammarMatcher::Clock::time_point::max();
    if (options.grammar_mask_budget_ms > 0)
      deadline =
          now + std::chrono::duration_cast<EngineClock::duration>(
                    std::chrono::duration<double, std::milli>(options.grammar_mask_budget_ms));
    if (r.deadline) deadline = std::min(deadline, *r.deadline);
    const TokenBitmask* mask = nullptr;
    try {
      mask = &r.grammar->allowed_tokens(deadline);
    } catch (const GrammarWorkExceeded&) {
      if (r.deadline && EngineClock::now() >= *r.deadline)
        return finish(r, std::move(event), "timeout");
      return grammar_failed(fmt::format(
          "a token mask took more than {} ms, the limit per step (grammar_mask_budget_ms); the "
          "grammar is too expensive to run",
          options.grammar_mask_budget_ms));
    } catch (const Error& e) {
      return grammar_failed(e.what());  // past the automaton's limits
    }
    const TokenBitmask& allowed = *mask;
    if (std::none_of(allowed.begin(), allowed.end(), [](uint64_t w) { return w != 0; })) {
      // A complete sentence with no stop token allowed to end it ends here; anything else means
      // the vocabulary cannot continue the grammar.
      if (r.grammar->accepting() || r.grammar->finished())
        return finish(r, std::move(event), "stop");
      fail("constrained decoding: the grammar allows no token of the vocabulary here");
    }
    apply_token_mask(logits, allowed);
  }
  SampleResult sampled = r.sampler.sample(logits, request.logprobs);
  const int32_t token = sampled.token;
  SampleLogprobs logprobs = std::move(sampled.logprobs);
  if (r.constraining) {
    bool accepted = false;
    try {
      accepted = r.grammar->accept_token(token);
    } catch (const Error& e) {
      return grammar_failed(e.what());
    }
    if (!accepted)
      fail("constrained decoding: sampled token {} that the grammar does not allow", token);
  } else if (request.constraint && token == request.constraint->trigger) {
    r.constraining = true;
  }
  r.tokens.push_back(token);
  ++r.generated;

  metrics.add_generation_tokens(1);
  if (r.generated == 1) {
    metrics.add_prompt_tokens(r.prompt_len);
    metrics.observe_time_to_first_token(seconds_between(r.arrival, now));
    if (request.prompt_logprobs >= 0) {
      event.prompt_logprobs = std::move(r.prompt_logprobs);
      r.prompt_logprobs_sent = true;
      r.read_prefix_cache = true;  // a recomputation after a preemption needs no logprobs
    }
  } else {
    metrics.observe_inter_token_latency(seconds_between(r.last_token, now));
  }
  r.last_token = now;

  // Stop conditions as the runtime Generator applies them: an EOS adds no text and releases
  // held bytes; a stop string hides itself and what follows; at max_tokens the held text is
  // released (and may still complete a stop string).
  const bool is_eos =
      std::find(request.stop.stop_token_ids.begin(), request.stop.stop_token_ids.end(), token) !=
      request.stop.stop_token_ids.end();
  const std::string piece = is_eos ? r.detokenizer.flush() : r.detokenizer.push(token);
  StopStringMatcher::Step matched = r.matcher.push(piece);
  TokenOutput output{token,    std::move(matched.text), request.logprobs, std::move(logprobs), now,
                     steps_run};
  std::string_view reason;
  if (matched.stopped) {
    reason = "stop";
    event.stop_string = matched.matched;
  } else if (is_eos) {
    reason = "stop";
    event.stop_token = token;
    output.text += r.matcher.flush();
  } else if (r.generated >= request.stop.max_tokens) {
    reason = "length";
    StopStringMatcher::Step tail = r.matcher.push(r.detokenizer.flush());
    output.text += tail.text;
    if (tail.stopped) {
      reason = "stop";
      event.stop_string = tail.matched;
    } else {
      output.text += r.matcher.flush();
    }
  }
  event.tokens.push_back(std::move(output));
  if (!reason.empty()) {
    finish(r, std::move(event), reason);
  } else {
    fill_totals(r, event);
    r.stream->push(std::move(event));
  }
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
