// POST /v1/messages (Anthropic Messages API) and POST /v1/messages/count_tokens: the request is
// translated to a chat request (serve/anthropic_request.h) and planned like a chat completion
// (serve/chat_plan.h); its tokens go through the same parse pipeline and become content blocks
// (serve/anthropic_stream.h), streamed as Anthropic's events or returned as one message.
//
// The thinking budget: with thinking {"type":"enabled","budget_tokens":n}, once n tokens have
// been generated and the model is still reasoning, its request is cancelled and the server
// closes the reasoning itself: the end-of-reasoning marker is appended, and generation continues
// in a new engine request whose prompt is the old prompt, the tokens so far and the marker (the
// prefix cache makes that cheap), constrained by the answer grammar alone when there is one.
#include <span>

#include "base/log.h"
#include "serve/anthropic_request.h"
#include "serve/anthropic_response.h"
#include "serve/anthropic_stream.h"
#include "serve/chat_plan.h"
#include "serve/chat_prompt.h"
#include "serve/openai_service.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

// One message being generated, shared with the streaming callback.
struct MessageCall {
  MessageMeta meta;
  Engine* engine = nullptr;
  const TextModel* model = nullptr;
  GenerationFields fields;
  ChoiceSpec spec;  // of the first engine request
  std::shared_ptr<const Grammar> answer_grammar;
  std::unique_ptr<ParsePipeline> parser;
  VisibleText visible;
  ContentBlocks blocks;
  std::vector<std::shared_ptr<RequestStream>> streams;  // the engine request running now
  DisconnectWatch watch;
  // The thinking budget, until it is spent; the end-of-reasoning marker the server appends.
  std::optional<int64_t> budget;
  int32_t think_close = -1;
  std::string think_close_text;
  std::vector<int32_t> generated;  // every output token, the appended marker included
  // The engine request running now: where its tokens start in `generated`, and the text they
  // delivered (the engine holds back text that may be a stop string or half a character).
  size_t segment_start = 0;
  std::string segment_text;
  const BpeTokenizer* tokenizer = nullptr;
  MessageUsage usage;
  std::string stop_reason, stop_sequence;
};

HttpReply anthropic_error_reply(const ApiError& error) {
  return json_reply(error.status, anthropic_error_json(error));
}

bool budget_spent(const MessageCall& call) {
  return call.budget && call.think_close >= 0 && call.parser->in_reasoning() &&
         static_cast<int64_t>(call.generated.size()) >= *call.budget;
}

// Ends the reasoning: cancels the running request, appends the marker and continues in a new
// request (none when max_tokens is used up: the message then ends with max_tokens).
void close_reasoning(MessageCall& call, std::vector<Json>& events) {
  cancel_all(call.streams);
  call.streams.clear();
  call.budget.reset();
  // The text the cancelled request still held back belongs to the reasoning.
  const std::span<const int32_t> segment(call.generated.data() + call.segment_start,
                                         call.generated.size() - call.segment_start);
  const std::string text = call.tokenizer->decode(segment);
  if (text.size() > call.segment_text.size() && text.starts_with(call.segment_text))
    call.blocks.add(call.parser->push_text(text.substr(call.segment_text.size())), events);
  call.generated.push_back(call.think_close);
  call.segment_start = call.generated.size();
  call.segment_text.clear();
  call.blocks.add(call.parser->push_token(call.think_close, call.think_close_text), events);
  const int64_t left = *call.fields.max_tokens - static_cast<int64_t>(call.generated.size());
  if (left <= 0) return;
  GenerationFields fields = call.fields;
  fields.max_tokens = left;
  ChoiceSpec spec = call.spec;
  spec.prompt.insert(spec.prompt.end(), call.generated.begin(), call.generated.end());
  spec.constraint.reset();
  if (call.answer_grammar) spec.constraint = TokenConstraint{-1, call.answer_grammar};
  call.streams = submit_choices(*call.engine, *call.model, fields, spec);
}

void finish_message(MessageCall& call, std::string_view engine_reason, std::string_view stop,
                    std::vector<Json>& events) {
  call.blocks.add(call.parser->finish(), events);
  call.blocks.finish(events);
  call.usage.output_tokens = static_cast<int64_t>(call.generated.size());
  call.stop_reason = anthropic_stop_reason(engine_reason, stop, call.blocks.has_tool_use());
  if (call.stop_reason == "stop_sequence") call.stop_sequence = std::string(stop);
  events.push_back(message_delta_event(call.stop_reason, call.stop_sequence, call.usage));
  events.push_back(message_stop_event());
}

// Runs the message to its end, writing its events through `write` when streaming. Returns the
// error that ended it early, if any.
std::optional<ApiError> run_message(MessageCall& call, const ChunkWrite* write) {
  std::vector<Json> events;
  auto flush = [&] {
    bool ok = true;
    for (const Json& event : events)
      ok = ok && (write == nullptr || (*write)(anthropic_sse(event)));
    events.clear();
    return ok;
  };
  bool started = false;
  try {
    for (;;) {
      if (call.streams.empty()) {  // the budget closed the reasoning with no tokens left
        finish_message(call, "length", "", events);
        return flush() ? std::nullopt : std::optional(client_gone());
      }
      std::vector<bool> finished(call.streams.size(), false);
      EngineEvent event;
      const int i = next_event(call.streams, finished, event, call.watch);
      if (i == kClientGone) return client_gone();
      if (i < 0) return internal_error("the engine request ended without a finish");
      if (!started) {
        // The first event knows how much of the prompt the prefix cache served.
        call.usage.cached_tokens = event.cached_prompt_tokens;
        events.push_back(message_start_event(call.meta, call.usage));
        events.push_back(ping_event());
        started = true;
      }
      bool restarted = false;
      for (const TokenOutput& token : event.tokens) {
        call.generated.push_back(token.token);
        call.segment_text += token.text;
        call.blocks.add(call.parser->push_token(token.token, call.visible(token)), events);
        if (budget_spent(call)) {
          close_reasoning(call, events);  // the old request's later tokens are dropped
          restarted = true;
          break;
        }
      }
      if (!flush()) return client_gone();
      if (restarted || !event.finished) continue;
      if (std::optional<ApiError> error = finish_error(event, call.spec.timeout_seconds))
        return error;
      finish_message(call, event.finish_reason, event.stop_string, events);
      return flush() ? std::nullopt : std::optional(client_gone());
    }
  } catch (const ApiException& e) {  // the continuation could not be submitted (queue full)
    return e.error();
  }
}

void stream_message(const std::shared_ptr<MessageCall>& call, const ChunkWrite& write) {
  if (std::optional<ApiError> error = run_message(*call, &write)) {
    cancel_all(call->streams);
    if (!is_client_gone(*error)) write(anthropic_sse(error_event(*error)));
  }
}

// Anthropic's errors for every failure of these routes, including unexpected ones.
template <typename F>
HttpReply anthropic_errors(std::string_view route, F&& handle) {
  try {
    return handle();
  } catch (const ApiException& e) {
    return anthropic_error_reply(e.error());
  } catch (const std::exception& e) {
    log_warn("POST {}: {}", route, e.what());
    return anthropic_error_reply(internal_error(e.what()));
  }
}

}  // namespace

HttpReply OpenAiService::messages(std::string_view body, const ClientAlive& client_alive) {
  return anthropic_errors("/v1/messages", [&] {
    MessagesRequest request = parse_messages_request(body);
    if (request.chat.generation.model != options_.served_model_name)
      return anthropic_error_reply(model_not_found(request.chat.generation.model));
    apply_thinking(request, options_.parser_format);
    ChatPlan plan = plan_chat(model_, engine_, options_, request.chat);
    const BpeTokenizer& tokenizer = model_.tokenizer();

    auto call = std::make_shared<MessageCall>();
    call->meta = {new_response_id("msg_"), options_.served_model_name};
    call->engine = &engine_;
    call->model = &model_;
    call->tokenizer = &tokenizer;
    call->fields = request.chat.generation;
    call->answer_grammar = plan.answer_grammar;
    call->parser = make_parser(plan.parser, tokenizer);
    call->visible = VisibleText(tokenizer, call->fields.skip_special_tokens, plan.marker_ids);
    call->watch = DisconnectWatch(client_alive);
    call->budget = request.budget_tokens;
    const ParserFormatSpec& format = parser_format_spec(options_.parser_format);
    call->think_close_text = format.markers[static_cast<size_t>(format.think_close)];
    call->think_close = tokenizer.token_id(call->think_close_text).value_or(-1);
    call->usage.prompt_tokens = static_cast<int64_t>(plan.spec.prompt.size());
    call->streams = submit_choices(engine_, model_, call->fields, plan.spec);
    call->spec = std::move(plan.spec);

    if (call->fields.stream) {
      HttpReply reply;
      reply.content_type = "text/event-stream";
      reply.stream = [call](const ChunkWrite& write) { stream_message(call, write); };
      return reply;
    }
    if (std::optional<ApiError> error = run_message(*call, nullptr)) {
      cancel_all(call->streams);
      return anthropic_error_reply(*error);
    }
    return json_reply(200, message_json(call->meta, call->blocks.content(), call->stop_reason,
                                        call->stop_sequence, call->usage));
  });
}

HttpReply OpenAiService::count_message_tokens(std::string_view body) {
  return anthropic_errors("/v1/messages/count_tokens", [&] {
    MessagesRequest request = parse_count_tokens_request(body);
    if (request.chat.generation.model != options_.served_model_name)
      return anthropic_error_reply(model_not_found(request.chat.generation.model));
    apply_thinking(request, options_.parser_format);
    const std::vector<int32_t> prompt =
        model_.control_guard().encode(render_prompt(model_, request.chat, options_.parser_format));
    return json_reply(200, count_tokens_json(static_cast<int64_t>(prompt.size())));
  });
}

}  // namespace minimax
