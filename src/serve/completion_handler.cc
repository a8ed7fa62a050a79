// POST /v1/completions: a text or token-id prompt, n choices of plain text (no parsers), legacy
// logprobs, echo, vLLM's prompt_logprobs; streamed or whole (the serving loop,
// serve/serving_loop.h, runs CompletionSink).
#include <memory>

#include "base/error.h"
#include "serve/openai_service.h"
#include "serve/serving_loop.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

// One choice's text so far and what the response needs of it.
struct CompletionState {
  std::string text;
  std::vector<TokenLogprobs> logprobs;
  std::string finish_reason;
  int64_t completion_tokens = 0;
  // The last event's text and logprobs: its chunk waits for on_finish when the event ends the
  // choice, so that a finish that is an error sends no chunk.
  std::string piece;
  std::vector<TokenLogprobs> piece_logprobs;
};

class CompletionSink final : public OpenAiSink {
 public:
  using OpenAiSink::OpenAiSink;

  bool echo = false;
  std::string prompt_text;
  std::vector<int32_t> prompt;
  std::vector<CompletionState> choices;
  std::vector<std::optional<PromptTokenLogprobs>> prompt_entries;
  int64_t cached_tokens = 0;

  void open(SinkWriter& out) override {
    if (!echo) return;
    for (size_t i = 0; i < choices.size(); ++i) {
      CompletionChoice choice;
      choice.index = static_cast<int>(i);
      choice.text = prompt_text;
      if (!out.write(sse_event(completion_chunk(meta, choice)))) return;
    }
  }

  EventStep on_event(int i, const EngineEvent& event, SinkWriter& out) override {
    CompletionState& choice = choices[i];
    cached_tokens = std::max(cached_tokens, event.cached_prompt_tokens);
    if (!event.prompt_logprobs.empty() && prompt_entries.empty())
      prompt_entries = prompt_logprob_entries(*tokenizer, event.prompt_logprobs);
    choice.piece.clear();
    choice.piece_logprobs.clear();
    for (const TokenOutput& token : event.tokens) {
      ++choice.completion_tokens;
      choice.piece += visible(token);
      if (token.has_logprobs) choice.piece_logprobs.push_back(token_logprobs(*tokenizer, token));
    }
    choice.text += choice.piece;
    if (fields.logprobs)
      choice.logprobs.insert(choice.logprobs.end(), choice.piece_logprobs.begin(),
                             choice.piece_logprobs.end());
    if (!event.finished && !choice.piece.empty()) write_chunk(i, "", out);
    return EventStep::kContinue;
  }

  void on_finish(int i, const EngineEvent& event, SinkWriter& out) override {
    choices[i].finish_reason = event.finish_reason;
    write_chunk(i, event.finish_reason, out);
  }

  HttpReply reply() override {
    const bool echo_logprobs = echo && fields.logprobs;
    std::vector<CompletionChoice> out;
    for (size_t i = 0; i < choices.size(); ++i) {
      CompletionChoice choice;
      choice.index = static_cast<int>(i);
      choice.text = (echo ? prompt_text : std::string()) + choices[i].text;
      choice.finish_reason = choices[i].finish_reason;
      if (fields.logprobs) {
        std::vector<TokenLogprobs> all =
            echo_logprobs ? echoed_logprobs() : std::vector<TokenLogprobs>{};
        all.insert(all.end(), choices[i].logprobs.begin(), choices[i].logprobs.end());
        choice.logprobs = completion_logprobs_json(all);
      }
      out.push_back(std::move(choice));
    }
    std::optional<Json> prompt_logprobs;
    if (fields.prompt_logprobs) prompt_logprobs = prompt_logprobs_json(prompt_entries);
    return json_reply(200, completion_json(meta, out, usage(), prompt_logprobs));
  }

 private:
  // The chunk of choice i's last event ("" finish_reason → null: not the last chunk).
  void write_chunk(int i, const std::string& finish_reason, SinkWriter& out) const {
    if (!out.streaming()) return;
    CompletionChoice choice;
    choice.index = i;
    choice.text = choices[i].piece;
    if (fields.logprobs) choice.logprobs = completion_logprobs_json(choices[i].piece_logprobs);
    choice.finish_reason = finish_reason;
    Json chunk = completion_chunk(meta, choice);
    if (fields.continuous_usage_stats) chunk["usage"] = usage_json(usage());
    out.write(sse_event(chunk));
  }

  Usage usage() const {
    Usage u{static_cast<int64_t>(prompt.size()), 0, cached_tokens};
    for (const CompletionState& c : choices) u.completion_tokens += c.completion_tokens;
    return u;
  }
  Json usage_chunk() const override { return completion_usage_chunk(meta, usage()); }

  // The prompt's tokens as legacy logprob entries (echo with logprobs); the first is unscored.
  std::vector<TokenLogprobs> echoed_logprobs() const {
    std::vector<TokenLogprobs> out;
    for (size_t i = 0; i < prompt.size(); ++i) {
      TokenLogprobs t;
      t.token = std::string(tokenizer->token_bytes(prompt[i]));
      const auto& entry = i < prompt_entries.size() ? prompt_entries[i] : std::nullopt;
      t.scored = entry.has_value();
      if (entry) {
        t.logprob = entry->actual.logprob;
        for (const auto& alt : entry->top) t.top.push_back({alt.text, alt.logprob});
      }
      out.push_back(std::move(t));
    }
    return out;
  }
};

}  // namespace

HttpReply OpenAiService::completions(const RouteCall& call) {
  CompletionRequest request = parse_completion_request(call.body);
  check_model(request.generation.model);
  const BpeTokenizer& tokenizer = model_.tokenizer();

  auto sink = std::make_shared<CompletionSink>(
      ResponseMeta{new_response_id("cmpl-"), unix_now(), options_.served_model_name},
      request.generation, tokenizer,
      VisibleText(tokenizer, request.generation.skip_special_tokens));
  if (request.prompt_text) {
    sink->prompt_text = *request.prompt_text;
    sink->prompt = model_.encode(*request.prompt_text);
  } else {
    sink->prompt = request.prompt_tokens;
    for (size_t i = 0; i < sink->prompt.size(); ++i)
      if (sink->prompt[i] < 0 || sink->prompt[i] >= tokenizer.vocab_size())
        throw ApiException(bad_request(fmt::format("token id {} is outside the vocabulary (0..{})",
                                                   sink->prompt[i], tokenizer.vocab_size() - 1),
                                       fmt::format("prompt[{}]", i)));
    sink->prompt_text = tokenizer.decode(sink->prompt);
  }
  if (sink->prompt.empty()) throw ApiException(bad_request("the prompt is empty", "prompt"));
  sink->echo = request.echo;
  sink->timeout_seconds = options_.request_timeout_seconds;
  sink->watch = DisconnectWatch(call.client_alive);
  sink->choices.resize(request.generation.n);

  ChoiceSpec spec;
  spec.prompt = sink->prompt;
  spec.default_max_tokens = 16;
  spec.prompt_field = "prompt";
  spec.timeout_seconds = options_.request_timeout_seconds;
  spec.prompt_logprobs = request.generation.prompt_logprobs.value_or(-1);
  if (request.generation.response_grammar)
    spec.constraint = TokenConstraint{-1, request.generation.response_grammar};
  if (request.echo && request.generation.logprobs)
    spec.prompt_logprobs = std::max(spec.prompt_logprobs, request.generation.top_logprobs);
  sink->streams = submit_choices(engine_, model_, request.generation, spec);
  return serve_call(std::move(sink), request.generation.stream);
}

}  // namespace minimax
