// POST /v1/completions: a text or token-id prompt, n choices of plain text (no parsers), legacy
// logprobs, echo, vLLM's prompt_logprobs; streamed or whole.
#include <memory>

#include "base/error.h"
#include "serve/openai_service.h"
#include "serve/service_requests.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

struct CompletionCall {
  ResponseMeta meta;
  GenerationFields fields;
  bool echo = false;
  std::string prompt_text;
  std::vector<int32_t> prompt;
  std::vector<std::shared_ptr<RequestStream>> streams;
  std::vector<std::string> texts;
  std::vector<std::vector<TokenLogprobs>> logprobs;
  std::vector<std::string> finish_reasons;
  std::vector<int64_t> completion_tokens;
  std::vector<std::optional<PromptTokenLogprobs>> prompt_entries;
  const BpeTokenizer* tokenizer = nullptr;
  double timeout_seconds = 0;
  int64_t cached_tokens = 0;
  DisconnectWatch watch;
  VisibleText visible;

  Usage usage() const {
    Usage u{static_cast<int64_t>(prompt.size()), 0, cached_tokens};
    for (int64_t n : completion_tokens) u.completion_tokens += n;
    return u;
  }
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

std::optional<ApiError> run_completion(CompletionCall& call, const ChunkWrite* write) {
  std::vector<bool> finished(call.streams.size(), false);
  EngineEvent event;
  for (;;) {
    const int i = next_event(call.streams, finished, event, call.watch);
    if (i == kClientGone) return client_gone();
    if (i < 0) return std::nullopt;
    call.cached_tokens = std::max(call.cached_tokens, event.cached_prompt_tokens);
    if (!event.prompt_logprobs.empty() && call.prompt_entries.empty())
      call.prompt_entries = prompt_logprob_entries(*call.tokenizer, event.prompt_logprobs);
    std::string piece;
    std::vector<TokenLogprobs> lp;
    for (const TokenOutput& token : event.tokens) {
      ++call.completion_tokens[i];
      piece += call.visible(token);
      if (token.has_logprobs) lp.push_back(token_logprobs(*call.tokenizer, token));
    }
    call.texts[i] += piece;
    if (call.fields.logprobs) call.logprobs[i].insert(call.logprobs[i].end(), lp.begin(), lp.end());
    if (event.finished) {
      if (auto error = finish_error(event, call.timeout_seconds)) return error;
      call.finish_reasons[i] = event.finish_reason;
    }
    if (write == nullptr || (piece.empty() && !event.finished)) continue;
    CompletionChoice choice;
    choice.index = i;
    choice.text = piece;
    if (call.fields.logprobs) choice.logprobs = completion_logprobs_json(lp);
    if (event.finished) choice.finish_reason = event.finish_reason;
    Json chunk = completion_chunk(call.meta, choice);
    if (call.fields.continuous_usage_stats) chunk["usage"] = usage_json(call.usage());
    if (!(*write)(sse_event(chunk))) return client_gone();
  }
}

void stream_completion(const std::shared_ptr<CompletionCall>& call, const ChunkWrite& write) {
  if (call->echo) {
    for (size_t i = 0; i < call->streams.size(); ++i) {
      CompletionChoice choice;
      choice.index = static_cast<int>(i);
      choice.text = call->prompt_text;
      if (!write(sse_event(completion_chunk(call->meta, choice)))) {
        cancel_all(call->streams);
        return;
      }
    }
  }
  if (std::optional<ApiError> error = run_completion(*call, &write)) {
    cancel_all(call->streams);
    if (is_client_gone(*error)) return;
    write(sse_error(*error));
    write(sse_done());
    return;
  }
  if (call->fields.include_usage)
    write(sse_event(completion_usage_chunk(call->meta, call->usage())));
  write(sse_done());
}

}  // namespace

HttpReply OpenAiService::completions(std::string_view body, const ClientAlive& client_alive) {
  CompletionRequest request = parse_completion_request(body);
  if (!request.generation.model.empty() && request.generation.model != options_.served_model_name)
    return error_reply(model_not_found(request.generation.model));
  const BpeTokenizer& tokenizer = model_.tokenizer();

  auto call = std::make_shared<CompletionCall>();
  if (request.prompt_text) {
    call->prompt_text = *request.prompt_text;
    call->prompt = model_.encode(*request.prompt_text);
  } else {
    call->prompt = request.prompt_tokens;
    for (size_t i = 0; i < call->prompt.size(); ++i)
      if (call->prompt[i] < 0 || call->prompt[i] >= tokenizer.vocab_size())
        throw ApiException(bad_request(fmt::format("token id {} is outside the vocabulary (0..{})",
                                                   call->prompt[i], tokenizer.vocab_size() - 1),
                                       fmt::format("prompt[{}]", i)));
    call->prompt_text = tokenizer.decode(call->prompt);
  }
  if (call->prompt.empty()) throw ApiException(bad_request("the prompt is empty", "prompt"));
  call->meta = {new_response_id("cmpl-"), unix_now(), options_.served_model_name};
  call->fields = request.generation;
  call->echo = request.echo;
  call->tokenizer = &tokenizer;
  call->timeout_seconds = options_.request_timeout_seconds;
  call->watch = DisconnectWatch(client_alive);
  call->visible = VisibleText(tokenizer, request.generation.skip_special_tokens);
  const int n = request.generation.n;
  call->texts.assign(n, "");
  call->logprobs.assign(n, {});
  call->finish_reasons.assign(n, "");
  call->completion_tokens.assign(n, 0);

  ChoiceSpec spec;
  spec.prompt = call->prompt;
  spec.default_max_tokens = 16;
  spec.prompt_field = "prompt";
  spec.timeout_seconds = options_.request_timeout_seconds;
  spec.prompt_logprobs = request.generation.prompt_logprobs.value_or(-1);
  if (request.generation.response_grammar)
    spec.constraint = TokenConstraint{-1, request.generation.response_grammar};
  const bool echo_logprobs = request.echo && request.generation.logprobs;
  if (echo_logprobs)
    spec.prompt_logprobs = std::max(spec.prompt_logprobs, request.generation.top_logprobs);
  call->streams = submit_choices(engine_, model_, request.generation, spec);

  if (request.generation.stream) {
    HttpReply reply;
    reply.content_type = "text/event-stream";
    reply.stream = [call](const ChunkWrite& write) { stream_completion(call, write); };
    return reply;
  }
  if (std::optional<ApiError> error = run_completion(*call, nullptr)) {
    cancel_all(call->streams);
    return error_reply(*error);
  }
  std::vector<CompletionChoice> choices;
  for (int i = 0; i < n; ++i) {
    CompletionChoice choice;
    choice.index = i;
    choice.text = (request.echo ? call->prompt_text : std::string()) + call->texts[i];
    choice.finish_reason = call->finish_reasons[i];
    if (request.generation.logprobs) {
      std::vector<TokenLogprobs> all =
          echo_logprobs ? call->echoed_logprobs() : std::vector<TokenLogprobs>{};
      all.insert(all.end(), call->logprobs[i].begin(), call->logprobs[i].end());
      choice.logprobs = completion_logprobs_json(all);
    }
    choices.push_back(std::move(choice));
  }
  std::optional<Json> prompt_logprobs;
  if (request.generation.prompt_logprobs)
    prompt_logprobs = prompt_logprobs_json(call->prompt_entries);
  return json_reply(200, completion_json(call->meta, choices, call->usage(), prompt_logprobs));
}

}  // namespace minimax
