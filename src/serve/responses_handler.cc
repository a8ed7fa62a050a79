// POST /v1/responses (OpenAI Responses API): the request is translated to a chat request
// (serve/responses_request.h), preceded by its instructions and the stored conversation of
// previous_response_id, and planned like a chat completion (serve/chat_plan.h); its tokens go
// through the same parse pipeline and become output items (serve/responses_stream.h), streamed as
// the Responses events or returned as one response object; the serving loop
// (serve/serving_loop.h) runs ResponsesSink. With `store` (the default) the finished response
// and its conversation are kept in the bounded ResponseStore for a later previous_response_id
// and for GET / DELETE /v1/responses/{id}.
#include <algorithm>

#include "serve/chat_plan.h"
#include "serve/openai_service.h"
#include "serve/response_store.h"
#include "serve/responses_request.h"
#include "serve/responses_response.h"
#include "serve/responses_stream.h"
#include "serve/serving_loop.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

// The generated turn as a template message, for the stored conversation.
Json assistant_message(const ParseResult& result) {
  Json message = {{"role", "assistant"},
                  {"content", result.content ? Json(*result.content) : Json(nullptr)}};
  if (result.reasoning) message["reasoning_content"] = *result.reasoning;
  for (const ToolCall& call : result.tool_calls) {
    // The parser's arguments are a JSON object's text (coerced to the tool's schema); a call cut
    // off by max_output_tokens may not be, and is kept without arguments.
    Json arguments = Json::parse(call.arguments.empty() ? "{}" : call.arguments, nullptr, false);
    message["tool_calls"].push_back(
        {{"id", call.id},
         {"type", "function"},
         {"function",
          {{"name", call.name},
           {"arguments", arguments.is_object() ? arguments : Json::object()}}}});
  }
  return message;
}

// One response being generated: its output items, the Responses events, the store.
class ResponsesSink final : public ServingSink {
 public:
  ResponseObjectMeta meta;
  Json echo;
  std::unique_ptr<ParsePipeline> parser;
  VisibleText visible;
  ResponseUsage usage;
  // With `store`: where the finished conversation goes, and the conversation so far (the
  // previous one and this input; without instructions, which a follow-up does not inherit).
  ResponseStore* store = nullptr;
  Json conversation;

  void open(SinkWriter& out) override {
    const Json response = response_json(meta, echo, Json::array(), "in_progress", nullptr);
    write(response_event("response.created", response), out);
    write(response_event("response.in_progress", response), out);
  }

  EventStep on_event(int /*index*/, const EngineEvent& event, SinkWriter& out) override {
    usage.cached_tokens = std::max(usage.cached_tokens, event.cached_prompt_tokens);
    for (const TokenOutput& token : event.tokens) {
      ++usage.output_tokens;
      if (parser->in_reasoning()) ++usage.reasoning_tokens;
      items_.add(parser->push_token(token.token, visible(token)), events_);
    }
    flush(out);
    return EventStep::kContinue;
  }

  void on_finish(int /*index*/, const EngineEvent& event, SinkWriter& out) override {
    status_ = response_status(event.finish_reason);
    items_.add(parser->finish(), events_);
    items_.finish(events_, status_);
    Json response = whole();
    if (store != nullptr) {
      conversation.push_back(assistant_message(parser->result()));
      store->put(meta.id, conversation, response);
    }
    events_.push_back(response_event("response.completed", std::move(response)));
    flush(out);
  }

  void close(SinkWriter& /*out*/) override {}  // response.completed was the last event
  void stream_error(const ApiError& error, SinkWriter& out) override {
    write(response_error_event(error), out);
  }
  HttpReply reply() override { return json_reply(200, whole()); }
  HttpReply reply_error(const ApiError& error) override { return error_reply(error); }

 private:
  Json whole() const { return response_json(meta, echo, items_.output(), status_, &usage); }

  void write(Json event, SinkWriter& out) {
    out.write(responses_sse(std::move(event), sequence_++));
  }

  // Writes the events so far (when streaming) and forgets them.
  void flush(SinkWriter& out) {
    if (out.streaming())
      for (Json& event : events_) write(std::move(event), out);
    events_.clear();
  }

  ResponseItems items_;
  std::vector<Json> events_;  // not yet written
  int64_t sequence_ = 0;
  std::string status_ = "completed";
};

// The 404 for a response id the store does not hold; `param` names the field that sent it ("" for
// the id in the path).
ApiException unknown_response(std::string_view id, std::string_view param) {
  return ApiException(ApiError{
      404,
      fmt::format("{}{}no stored response '{}' (unknown, made with store: false, deleted, or "
                  "evicted: the server keeps the last {} responses)",
                  param, param.empty() ? "" : ": ", id, ResponseStore::kMaxResponses),
      api_error_type(404), std::string(param)});
}

}  // namespace

HttpReply OpenAiService::responses(const RouteCall& call) {
  ResponsesRequest request = parse_responses_request(call.body);
  check_model(request.chat.generation.model);
  Json previous;
  if (!request.previous_response_id.empty()) {
    std::optional<Json> stored = responses_.find_conversation(request.previous_response_id);
    if (!stored) throw unknown_response(request.previous_response_id, "previous_response_id");
    previous = std::move(*stored);
  }
  const Json input = std::move(request.chat.messages);
  request.chat.messages = conversation_messages(request.instructions, previous, input);
  const ChatPlan plan = plan_chat(model_, engine_, options_, request.chat);
  const BpeTokenizer& tokenizer = model_.tokenizer();

  auto sink = std::make_shared<ResponsesSink>();
  sink->meta = {new_response_id("resp_"), unix_now(), options_.served_model_name};
  sink->echo = std::move(request.echo);
  sink->parser = make_parser(plan.parser, tokenizer);
  sink->visible =
      VisibleText(tokenizer, request.chat.generation.skip_special_tokens, plan.marker_ids);
  sink->usage.input_tokens = static_cast<int64_t>(plan.spec.prompt.size());
  if (request.store) {
    sink->store = &responses_;
    sink->conversation = conversation_messages(std::nullopt, previous, input);
  }
  sink->watch = DisconnectWatch(call.client_alive);
  sink->timeout_seconds = plan.spec.timeout_seconds;
  sink->streams = submit_choices(engine_, model_, request.chat.generation, plan.spec);
  return serve_call(std::move(sink), request.chat.generation.stream);
}

HttpReply OpenAiService::retrieve_response(const RouteCall& call) {
  const std::string id(call.rest);
  std::optional<Json> response = responses_.find_response(id);
  if (!response) throw unknown_response(id, "");
  return json_reply(200, *response);
}

HttpReply OpenAiService::delete_response(const RouteCall& call) {
  const std::string id(call.rest);
  if (!responses_.erase(id)) throw unknown_response(id, "");
  return json_reply(200, Json{{"id", id}, {"object", "response"}, {"deleted", true}});
}

}  // namespace minimax
