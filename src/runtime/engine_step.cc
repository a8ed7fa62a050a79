// One engine step: schedule, one batched forward, then per sequence prompt logprobs and the next
// token (engine_token.cc).
#include <algorithm>

#include "base/error.h"
#include "runtime/engine_impl.h"

namespace minimax {
namespace {

ActiveRequest& as_request(SchedSequence* seq) { return static_cast<ActiveRequest&>(*seq); }

// How much of a draft the request's grammar allows: a draft that leaves the grammar is cut there,
// so a verify step carries no position its masked sampler must refuse. Before the trigger, the
// tokens up to and including it are free text.
size_t within_grammar(ActiveRequest& r, std::span<const int32_t> draft) {
  if (!r.grammar) return draft.size();
  size_t free_text = 0;
  if (!r.constraining) {
    const auto trigger = std::find(draft.begin(), draft.end(), r.request.constraint->trigger);
    if (trigger == draft.end()) return draft.size();
    free_text = static_cast<size_t>(trigger - draft.begin()) + 1;
  }
  return free_text + r.grammar->allowed_prefix(draft.subspan(free_text));
}

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
  if (options.speculative) propose_drafts();
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
  std::vector<std::vector<int32_t>> with_draft(plan.chunks.size());  // token + draft tokens
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
    std::span<const int32_t> tokens =
        std::span<const int32_t>(r.tokens).subspan(chunk.begin, chunk.count - chunk.draft);
    if (chunk.draft > 0) {  // a verify: every position's logits are sampled
      with_draft[i].assign(tokens.begin(), tokens.end());
      with_draft[i].insert(with_draft[i].end(), r.draft.begin(), r.draft.end());
      tokens = with_draft[i];
    }
    batch[i] =
        BatchSequence{tokens, positions[i], &r.cache,
                      all_rows || chunk.draft > 0 ? LogitsFor::kAllTokens : LogitsFor::kLastToken};
  }

  std::vector<float> logits;
  try {
    const EngineClock::time_point started = EngineClock::now();
    logits = model.forward_batch(batch);
    if (step_cost) step_cost->record(plan.num_tokens, seconds_between(started, EngineClock::now()));
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
  if (draft_head) hand_out_taps(plan, batch);

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
      if (chunk.draft > 0) {
        emit_verified(r, chunk, std::span<float>(logits.data() + row * vocab, rows * vocab));
      } else if (chunk.samples()) {
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

void Engine::Impl::hand_out_taps(const SchedulerStep& plan, std::span<const BatchSequence> batch) {
  const std::span<const float> taps = model.hidden_taps();
  const auto width = static_cast<size_t>(draft_head->tap_width());
  size_t row = 0;
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    const ScheduledChunk& chunk = plan.chunks[i];
    ActiveRequest& r = as_request(chunk.seq);
    const size_t rows = batch[i].tokens.size();
    if (r.drafter)
      r.drafter->add_taps(chunk.begin, chunk.count, taps.subspan(row * width, rows * width));
    row += rows;
  }
}

void Engine::Impl::propose_drafts() {
  const SpeculativeConfig& config = *options.speculative;
  // The step as it would run without drafts: one token per decoding sequence.
  const auto decoding = static_cast<int64_t>(scheduler.running().size());
  std::vector<ActiveRequest*> asking;
  std::vector<Drafter*> drafters;
  std::vector<std::span<const int32_t>> sequences;
  std::vector<int> room;
  for (SchedSequence* seq : scheduler.running()) {
    ActiveRequest& r = as_request(seq);
    r.draft.clear();
    if (r.done || r.remaining() != 1 || !r.drafter) continue;
    // Tokens emitted since the last proposal score the one that was not verified.
    for (; r.shadow_seen < static_cast<int64_t>(r.tokens.size()); ++r.shadow_seen)
      if (r.shadow_seen >= r.prompt_len) r.draft_policy->shadow_emitted(r.tokens[r.shadow_seen]);
    // A verify emits at most draft + 1 tokens, within max_tokens and the context.
    const int64_t left = std::min(options.max_model_len - static_cast<int64_t>(r.tokens.size()),
                                  r.request.stop.max_tokens - r.generated - 1);
    if (left <= 0) continue;
    asking.push_back(&r);
    drafters.push_back(r.drafter.get());
    sequences.push_back(r.tokens);
    room.push_back(static_cast<int>(std::min<int64_t>(left, config.num_speculative_tokens)));
  }
  // Every sequence's proposal at once: an EAGLE-3 head reads its weights once for all of them.
  std::vector<std::vector<int32_t>> proposals = Drafter::propose_batch(drafters, sequences, room);
  for (size_t i = 0; i < asking.size(); ++i) {
    ActiveRequest& r = *asking[i];
    std::vector<int32_t>& proposal = proposals[i];
    proposal.resize(within_grammar(r, proposal));
    const int chosen =
        r.draft_policy->choose(static_cast<int>(proposal.size()), *step_cost, decoding, decoding);
    if (chosen > 0) {
      r.draft.assign(proposal.begin(), proposal.begin() + chosen);
      r.draft_policy->shadow_propose({});
    } else if (!r.draft_policy->shadow_pending()) {
      r.draft_policy->shadow_propose(std::move(proposal));
    }
  }
}

void Engine::Impl::emit_verified(ActiveRequest& r, const ScheduledChunk& chunk,
                                 std::span<float> rows) {
  // Row t holds the logits after draft token t - 1 (row 0: after the sequence's own last token).
  // Each row is sampled exactly as a plain decode would sample it; the draft token at t is
  // accepted when it is what the sampler picked, so the output is the plain run's.
  const auto vocab = rows.size() / static_cast<size_t>(chunk.count);
  const std::vector<int32_t> draft = r.draft;
  int64_t accepted = 0;
  for (int64_t t = 0; t <= chunk.draft; ++t) {
    EngineEvent event;
    emit_token(r, rows.subspan(static_cast<size_t>(t) * vocab, vocab), event);
    if (r.done || t == chunk.draft || r.tokens.back() != draft[static_cast<size_t>(t)]) break;
    ++accepted;
  }
  r.draft_policy->record(static_cast<int>(chunk.draft), static_cast<int>(accepted));
  metrics.add_spec_decode(chunk.draft, accepted);
  r.shadow_seen = static_cast<int64_t>(r.tokens.size());
  if (!r.done) scheduler.accept_draft(&r, accepted);
}

}  // namespace minimax
