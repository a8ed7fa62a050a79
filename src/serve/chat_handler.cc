// POST /v1/chat/completions: template, tokenize, submit n choices, parse each choice's tokens into
// reasoning / content / tool calls, and stream the deltas or return the whole message.
#include <algorithm>
#include <memory>

#include "base/error.h"
#include "serve/chat_plan.h"
#include "serve/openai_service.h"
#include "serve/parse_pipeline.h"
#include "serve/service_requests.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

// One choice's parser and what the response needs of it.
struct ChoiceState {
  std::unique_ptr<ParsePipeline> parser;
  std::vector<TokenLogprobs> logprobs;
  std::string finish_reason;
  int64_t completion_tokens = 0;
};

// Everything a chat request needs after validation, shared by the streaming callback.
struct ChatCall {
  ResponseMeta meta;
  GenerationFields fields;
  std::vector<std::shared_ptr<RequestStream>> streams;
  std::vector<ChoiceState> choices;
  const BpeTokenizer* tokenizer = nullptr;
  double timeout_seconds = 0;
  int64_t prompt_tokens = 0, cached_tokens = 0;
  std::optional<Json> prompt_logprobs;
  DisconnectWatch watch;
  VisibleText visible;

  Usage usage() const {
    Usage u{prompt_tokens, 0, cached_tokens};
    for (const ChoiceState& c : choices) u.completion_tokens += c.completion_tokens;
    return u;
  }
  void note_totals(const EngineEvent& e) {
    if (e.prompt_tokens > 0) prompt_tokens = e.prompt_tokens;
    cached_tokens = std::max(cached_tokens, e.cached_prompt_tokens);
  }
};

// Runs every choice to its end, writing chunks through `write` when streaming. Returns the error
// that ended the request early, if any.
std::optional<ApiError> run_choices(ChatCall& call, const ChunkWrite* write) {
  const bool stream = write != nullptr;
  auto emit = [&](const Json& chunk) { return !stream || (*write)(sse_event(chunk)); };
  std::vector<bool> finished(call.streams.size(), false);
  EngineEvent event;
  for (;;) {
    const int i = next_event(call.streams, finished, event, call.watch);
    if (i == kClientGone) return client_gone();
    if (i < 0) return std::nullopt;
    ChoiceState& choice = call.choices[i];
    call.note_totals(event);
    if (!event.prompt_logprobs.empty() && !call.prompt_logprobs)
      call.prompt_logprobs =
          prompt_logprobs_json(prompt_logprob_entries(*call.tokenizer, event.prompt_logprobs));
    for (const TokenOutput& token : event.tokens) {
      ++choice.completion_tokens;
      const ParseDelta delta = choice.parser->push_token(token.token, call.visible(token));
      std::vector<TokenLogprobs> lp;
      if (token.has_logprobs) lp.push_back(token_logprobs(*call.tokenizer, token));
      if (call.fields.logprobs) choice.logprobs.insert(choice.logprobs.end(), lp.begin(), lp.end());
      if (!stream) continue;
      for (Json& chunk : chat_delta_chunks(call.meta, i, delta, lp, call.fields.logprobs)) {
        if (call.fields.continuous_usage_stats) chunk["usage"] = usage_json(call.usage());
        if (!emit(chunk)) return client_gone();
      }
    }
    if (!event.finished) continue;
    if (auto error = finish_error(event, call.timeout_seconds)) return error;
    const ParseDelta tail = choice.parser->finish();
    choice.finish_reason =
        chat_finish_reason(event.finish_reason, !choice.parser->result().tool_calls.empty());
    if (!stream) continue;
    for (const Json& chunk : chat_delta_chunks(call.meta, i, tail))
      if (!emit(chunk)) return client_gone();
    if (!emit(chat_finish_chunk(call.meta, i, choice.finish_reason))) return client_gone();
  }
}

void stream_chat(const std::shared_ptr<ChatCall>& call, const ChunkWrite& write) {
  for (size_t i = 0; i < call->choices.size(); ++i)
    if (!write(sse_event(chat_role_chunk(call->meta, static_cast<int>(i))))) {
      cancel_all(call->streams);
      return;
    }
  if (std::optional<ApiError> error = run_choices(*call, &write)) {
    cancel_all(call->streams);
    if (is_client_gone(*error)) return;
    write(sse_error(*error));
    write(sse_done());
    return;
  }
  if (call->fields.include_usage) write(sse_event(chat_usage_chunk(call->meta, call->usage())));
  write(sse_done());
}

}  // namespace

HttpReply OpenAiService::chat_completions(std::string_view body, const ClientAlive& client_alive) {
  ChatRequest request = parse_chat_request(body);
  if (!request.generation.model.empty() && request.generation.model != options_.served_model_name)
    return error_reply(model_not_found(request.generation.model));
  const BpeTokenizer& tokenizer = model_.tokenizer();
  const ChatPlan plan = plan_chat(model_, engine_, options_, request);

  auto call = std::make_shared<ChatCall>();
  call->meta = {new_response_id("chatcmpl-"), unix_now(), options_.served_model_name};
  call->fields = request.generation;
  call->tokenizer = &tokenizer;
  call->timeout_seconds = options_.request_timeout_seconds;
  call->prompt_tokens = static_cast<int64_t>(plan.spec.prompt.size());
  call->watch = DisconnectWatch(client_alive);
  call->visible = VisibleText(tokenizer, request.generation.skip_special_tokens, plan.marker_ids);
  call->streams = submit_choices(engine_, model_, request.generation, plan.spec);
  for (int i = 0; i < request.generation.n; ++i) {
    ChoiceState choice;
    choice.parser = make_parser(plan.parser, tokenizer);
    call->choices.push_back(std::move(choice));
  }

  if (request.generation.stream) {
    HttpReply reply;
    reply.content_type = "text/event-stream";
    reply.stream = [call](const ChunkWrite& write) { stream_chat(call, write); };
    return reply;
  }
  if (std::optional<ApiError> error = run_choices(*call, nullptr)) {
    cancel_all(call->streams);
    return error_reply(*error);
  }
  std::vector<ChatChoice> choices;
  for (size_t i = 0; i < call->choices.size(); ++i) {
    ChoiceState& c = call->choices[i];
    ChatChoice out;
    out.index = static_cast<int>(i);
    out.message = c.parser->result();
    out.finish_reason = c.finish_reason;
    if (request.generation.logprobs) out.logprobs = c.logprobs;
    choices.push_back(std::move(out));
  }
  return json_reply(
      200, chat_completion_json(call->meta, choices, call->usage(), call->prompt_logprobs));
}

}  // namespace minimax
