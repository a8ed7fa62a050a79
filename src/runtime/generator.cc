// The generation loop (runtime/generator.h).
#include "runtime/generator.h"

#include <algorithm>
#include <chrono>

#include "base/clock.h"
#include "base/error.h"
#include "runtime/spec/speculative_stepper.h"
#include "runtime/stop_strings.h"
#include "text/detokenizer.h"

namespace minimax {

std::string_view finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kCancelled:
      return "cancelled";
  }
  return "?";
}

std::vector<float> LogitsSource::decode_all(std::span<const int32_t> tokens) {
  std::vector<float> rows;
  for (int32_t token : tokens) {
    std::vector<float> row = decode(token);
    rows.insert(rows.end(), row.begin(), row.end());
  }
  return rows;
}

void LogitsSource::truncate(int64_t) {
  fail("speculative decoding: this logits source cannot roll back rejected draft tokens");
}

Generator::Generator(LogitsSource& source, const BpeTokenizer& tokenizer, bool skip_special_tokens)
    : source_(source), tokenizer_(tokenizer), skip_special_(skip_special_tokens) {}

void LogitsSource::set_tap_sink(TapSink) {
  fail(
      "speculative decoding: this logits source has no model whose hidden states an EAGLE-3 "
      "head could read");
}

void Generator::enable_speculation(const SpeculativeConfig& config, StepCostModel cost,
                                   std::shared_ptr<Eagle3Head> head) {
  spec_ = config;
  head_ = std::move(head);
  cost_ = std::make_unique<StepCostModel>(std::move(cost));
}

GenerationResult Generator::generate(std::span<const int32_t> prompt,
                                     const SamplingParams& sampling, const StopConditions& stop,
                                     const GenerationCallback& on_token, bool want_logprobs) {
  if (prompt.empty()) fail("prompt: no tokens to generate from");
  if (stop.max_tokens <= 0) fail("max_tokens: must be > 0, got {}", stop.max_tokens);
  const auto prompt_size = static_cast<int64_t>(prompt.size());
  if (prompt_size > source_.capacity())
    fail("prompt: {} tokens do not fit the context of {} tokens", prompt_size, source_.capacity());
  Sampler sampler(sampling, prompt);
  StopStringMatcher matcher(stop.stop_strings);
  IncrementalDetokenizer detokenizer(tokenizer_, skip_special_);
  // The last sampled token is never fed back, so the context bounds the tokens fed, not sampled.
  const int64_t limit = std::min(stop.max_tokens, source_.capacity() - prompt_size + 1);

  GenerationResult result;
  result.stats.prompt_tokens = prompt_size;
  // With speculation the rows come from the stepper, which sees the whole sequence. It exists
  // before the prefill so that an EAGLE-3 drafter receives the prompt's taps.
  std::optional<SpeculativeStepper> stepper;
  std::vector<int32_t> sequence;
  if (spec_) stepper.emplace(source_, *spec_, *cost_, nullptr, head_);
  auto start = std::chrono::steady_clock::now();
  std::vector<float> logits = source_.prefill(prompt);
  result.stats.prefill_seconds = seconds_since(start);
  result.stats.reused_prompt_tokens = source_.reused_prefix();
  start = std::chrono::steady_clock::now();
  if (stepper) {
    stepper->start(prompt);
    sequence.assign(prompt.begin(), prompt.end());
  }

  for (int64_t index = 0;; ++index) {
    std::span<float> row(logits);
    if (index > 0 && stepper) {
      sequence.push_back(result.tokens.back());
      row = stepper->next_logits(sequence);
    } else if (index > 0) {
      logits = source_.decode(result.tokens.back());
      row = logits;
      ++result.stats.decode_steps;
    }
    const SampleResult sampled = sampler.sample(row, want_logprobs);
    result.tokens.push_back(sampled.token);

    GenerationEvent event;
    event.token = sampled.token;
    event.index = index;
    event.has_logprobs = want_logprobs;
    event.logprobs = sampled.logprobs;
    const bool is_eos = std::find(stop.stop_token_ids.begin(), stop.stop_token_ids.end(),
                                  sampled.token) != stop.stop_token_ids.end();
    // An EOS adds no text but ends the stream, so held bytes are released now.
    const std::string piece = is_eos ? detokenizer.flush() : detokenizer.push(sampled.token);
    StopStringMatcher::Step step = matcher.push(piece);
    event.text = std::move(step.text);
    if (step.stopped) {
      result.finish = FinishReason::kStop;
      result.stop_string = step.matched;
      event.last = true;
    } else if (is_eos) {
      result.finish = FinishReason::kStop;
      result.stop_token = sampled.token;
      event.text += matcher.flush();
      event.last = true;
    } else if (index + 1 >= limit) {
      result.finish = FinishReason::kLength;
      StopStringMatcher::Step tail = matcher.push(detokenizer.flush());
      event.text += tail.text;
      if (tail.stopped) {
        result.finish = FinishReason::kStop;
        result.stop_string = tail.matched;
      } else {
        event.text += matcher.flush();
      }
      event.last = true;
    }
    result.text += event.text;
    const bool go_on = on_token ? on_token(event) : true;
    if (!event.last && !go_on) {
      result.finish = FinishReason::kCancelled;
      break;
    }
    if (event.last) break;
  }
  if (stepper) {
    stepper->finish(result.tokens);
    const SpecDecodeCounts& counts = stepper->counts();
    result.stats.decode_steps = counts.forward_steps;
    result.stats.spec_drafts = counts.num_drafts;
    result.stats.spec_draft_tokens = counts.num_draft_tokens;
    result.stats.spec_accepted_tokens = counts.num_accepted_tokens;
  }
  result.stats.generated_tokens = static_cast<int64_t>(result.tokens.size());
  result.stats.decode_seconds = seconds_since(start);
  return result;
}

}  // namespace minimax
