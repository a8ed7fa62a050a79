// The engine's per-token work for one request after a forward (runtime/engine_impl.h): the
// grammar's mask, sampling, the grammar's advance, metrics, detokenization and the stop rules.
#include <algorithm>

#include "base/error.h"
#include "runtime/engine_impl.h"

namespace minimax {

void Engine::Impl::emit_token(ActiveRequest& r, std::span<float> logits, EngineEvent& event) {
  const EngineClock::time_point now = EngineClock::now();
  if (r.constraining && !mask_logits(r, logits, event, now)) return;
  SampleResult sampled = r.sampler.sample(logits, r.request.logprobs);
  if (!advance_grammar(r, sampled.token, event)) return;
  r.tokens.push_back(sampled.token);
  ++r.generated;
  count_token(r, event, now);
  const std::string_view reason = add_output(r, std::move(sampled), event, now);
  if (!reason.empty()) return finish(r, std::move(event), reason);
  fill_totals(r, event);
  r.stream->push(std::move(event));
}

void Engine::Impl::end_for_grammar(ActiveRequest& r, EngineEvent& event, const std::string& why) {
  event.error = "constraint: " + why;
  event.request_error = true;
  finish(r, std::move(event), "error");
}

bool Engine::Impl::mask_logits(ActiveRequest& r, std::span<float> logits, EngineEvent& event,
                               EngineClock::time_point now) {
  // Mask work is bounded per step, and never runs past the request's own deadline.
  if (r.deadline && now >= *r.deadline) {
    finish(r, std::move(event), "timeout");
    return false;
  }
  // The budget is of this thread's CPU time (GrammarMatcher::Clock): a mask is not cut because the
  // machine is busy. The request's own (wall-clock) deadline is checked around it.
  auto deadline = GrammarMatcher::Clock::time_point::max();
  if (options.grammar_mask_budget_ms > 0)
    deadline = GrammarMatcher::Clock::now() +
               std::chrono::duration_cast<GrammarMatcher::Clock::duration>(
                   std::chrono::duration<double, std::milli>(options.grammar_mask_budget_ms));
  const TokenBitmask* mask = nullptr;
  try {
    mask = &r.grammar->allowed_tokens(deadline);
  } catch (const GrammarWorkExceeded&) {
    if (r.deadline && EngineClock::now() >= *r.deadline) {
      finish(r, std::move(event), "timeout");
    } else {
      end_for_grammar(r, event,
                      fmt::format("a token mask took more than {} ms, the limit per step "
                                  "(grammar_mask_budget_ms); the grammar is too expensive to run",
                                  options.grammar_mask_budget_ms));
    }
    return false;
  } catch (const Error& e) {
    end_for_grammar(r, event, e.what());  // past the automaton's limits
    return false;
  }
  if (std::none_of(mask->begin(), mask->end(), [](uint64_t w) { return w != 0; })) {
    // A complete sentence with no stop token allowed to end it ends here; anything else means
    // the vocabulary cannot continue the grammar.
    if (!r.grammar->accepting() && !r.grammar->finished())
      fail("constrained decoding: the grammar allows no token of the vocabulary here");
    finish(r, std::move(event), "stop");
    return false;
  }
  apply_token_mask(logits, *mask);
  return true;
}

bool Engine::Impl::advance_grammar(ActiveRequest& r, int32_t token, EngineEvent& event) {
  if (!r.constraining) {
    if (r.request.constraint && token == r.request.constraint->trigger) r.constraining = true;
    return true;
  }
  bool accepted = false;
  try {
    accepted = r.grammar->accept_token(token);
  } catch (const Error& e) {
    end_for_grammar(r, event, e.what());
    return false;
  }
  if (!accepted)
    fail("constrained decoding: sampled token {} that the grammar does not allow", token);
  return true;
}

void Engine::Impl::count_token(ActiveRequest& r, EngineEvent& event, EngineClock::time_point now) {
  metrics.add_generation_tokens(1);
  if (r.generated == 1) {
    metrics.add_prompt_tokens(r.prompt_len);
    metrics.observe_time_to_first_token(seconds_between(r.arrival, now));
    if (r.request.prompt_logprobs >= 0) {
      event.prompt_logprobs = std::move(r.prompt_logprobs);
      r.prompt_logprobs_sent = true;
      r.read_prefix_cache = true;  // a recomputation after a preemption needs no logprobs
    }
  } else {
    metrics.observe_inter_token_latency(seconds_between(r.last_token, now));
  }
  r.last_token = now;
}

std::string_view Engine::Impl::add_output(ActiveRequest& r, SampleResult sampled,
                                          EngineEvent& event, EngineClock::time_point now) {
  // Stop conditions as the runtime Generator applies them: an EOS adds no text and releases
  // held bytes; a stop string hides itself and what follows; at max_tokens the held text is
  // released (and may still complete a stop string).
  const StopConditions& stop = r.request.stop;
  const int32_t token = sampled.token;
  const bool is_eos = std::find(stop.stop_token_ids.begin(), stop.stop_token_ids.end(), token) !=
                      stop.stop_token_ids.end();
  const std::string piece = is_eos ? r.detokenizer.flush() : r.detokenizer.push(token);
  StopStringMatcher::Step matched = r.matcher.push(piece);
  TokenOutput output{
      token,    std::move(matched.text), r.request.logprobs, std::move(sampled.logprobs), now,
      steps_run};
  std::string_view reason;
  if (matched.stopped) {
    reason = "stop";
    event.stop_string = matched.matched;
  } else if (is_eos) {
    reason = "stop";
    event.stop_token = token;
    output.text += r.matcher.flush();
  } else if (r.generated >= stop.max_tokens) {
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
  return reason;
}

}  // namespace minimax
