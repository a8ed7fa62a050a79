// POST /v1/messages (Anthropic Messages API) and POST /v1/messages/count_tokens: the request is
// translated to a chat request (serve/anthropic_request.h) and planned like a chat completion
// (serve/chat_plan.h); its tokens go through the same parse pipeline and become content blocks
// (serve/anthropic_stream.h), streamed as Anthropic's events or returned as one message; the
// serving loop (serve/serving_loop.h) runs MessageSink.
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
#include "serve/serving_loop.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

HttpReply anthropic_error_reply(const ApiError& error) {
  return json_reply(error.status, anthropic_error_json(error));
}

// One message being generated: its content blocks, the thinking budget, Anthropic's events.
class MessageSink final : public ServingSink {
 public:
  MessageMeta meta;
  Engine* engine = nullptr;
  const TextModel* model = nullptr;
  GenerationFields fields;
  ChoiceSpec spec;  // of the first engine request
  std::shared_ptr<const Grammar> answer_grammar;
  std::unique_ptr<ParsePipeline> parser;
  VisibleText visible;
  // The thinking budget, until it is spent; the end-of-reasoning marker the server appends.
  std::optional<int64_t> budget;
  int32_t think_close = -1;
  std::string think_close_text;
  const BpeTokenizer* tokenizer = nullptr;
  MessageUsage usage;

  EventStep on_event(int /*index*/, const EngineEvent& event, SinkWriter& out) override {
    if (!started_) {
      // The first event knows how much of the prompt the prefix cache served.
      usage.cached_tokens = event.cached_prompt_tokens;
      events_.push_back(message_start_event(meta, usage));
      events_.push_back(ping_event());
      started_ = true;
    }
    EventStep step = EventStep::kContinue;
    for (const TokenOutput& token : event.tokens) {
      generated_.push_back(token.token);
      segment_text_ += token.text;
      blocks_.add(parser->push_token(token.token, visible(token)), events_);
      if (budget_spent()) {
        close_reasoning();  // the old request's later tokens are dropped
        // No tokens left for an answer: the message ends with max_tokens.
        if (streams.empty()) finish_message("length", "");
        step = EventStep::kRestarted;
        break;
      }
    }
    flush(out);
    return step;
  }

  void on_finish(int /*index*/, const EngineEvent& event, SinkWriter& out) override {
    finish_message(event.finish_reason, event.stop_string);
    flush(out);
  }

  void close(SinkWriter& /*out*/) override {}  // message_stop was the last event
  void stream_error(const ApiError& error, SinkWriter& out) override {
    out.write(anthropic_sse(error_event(error)));
  }
  HttpReply reply() override {
    return json_reply(200,
                      message_json(meta, blocks_.content(), stop_reason_, stop_sequence_, usage));
  }
  HttpReply reply_error(const ApiError& error) override { return anthropic_error_reply(error); }

 private:
  bool budget_spent() const {
    return budget && think_close >= 0 && parser->in_reasoning() &&
           static_cast<int64_t>(generated_.size()) >= *budget;
  }

  // Ends the reasoning: cancels the running request, appends the marker and continues in a new
  // request (none when max_tokens is used up).
  void close_reasoning() {
    cancel_all(streams);
    streams.clear();
    budget.reset();
    // The text the cancelled request still held back belongs to the reasoning.
    const std::span<const int32_t> segment(generated_.data() + segment_start_,
                                           generated_.size() - segment_start_);
    const std::string text = tokenizer->decode(segment);
    if (text.size() > segment_text_.size() && text.starts_with(segment_text_))
      blocks_.add(parser->push_text(text.substr(segment_text_.size())), events_);
    generated_.push_back(think_close);
    segment_start_ = generated_.size();
    segment_text_.clear();
    blocks_.add(parser->push_token(think_close, think_close_text), events_);
    const int64_t left = *fields.max_tokens - static_cast<int64_t>(generated_.size());
    if (left <= 0) return;
    GenerationFields continued = fields;
    continued.max_tokens = left;
    ChoiceSpec next = spec;
    next.prompt.insert(next.prompt.end(), generated_.begin(), generated_.end());
    next.constraint.reset();
    if (answer_grammar) next.constraint = TokenConstraint{-1, answer_grammar};
    streams = submit_choices(*engine, *model, continued, next);
  }

  void finish_message(std::string_view engine_reason, std::string_view stop) {
    blocks_.add(parser->finish(), events_);
    blocks_.finish(events_);
    usage.output_tokens = static_cast<int64_t>(generated_.size());
    stop_reason_ = anthropic_stop_reason(engine_reason, stop, blocks_.has_tool_use());
    if (stop_reason_ == "stop_sequence") stop_sequence_ = std::string(stop);
    events_.push_back(message_delta_event(stop_reason_, stop_sequence_, usage));
    events_.push_back(message_stop_event());
  }

  // Writes the events so far (when streaming) and forgets them.
  void flush(SinkWriter& out) {
    for (const Json& event : events_) out.write(anthropic_sse(event));
    events_.clear();
  }

  bool started_ = false;  // message_start is sent
  ContentBlocks blocks_;
  std::vector<Json> events_;        // not yet written
  std::vector<int32_t> generated_;  // every output token, the appended marker included
  // The engine request running now: where its tokens start in `generated_`, and the text they
  // delivered (the engine holds back text that may be a stop string or half a character).
  size_t segment_start_ = 0;
  std::string segment_text_;
  std::string stop_reason_, stop_sequence_;
};

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

HttpReply OpenAiService::messages(const RouteCall& call) {
  return anthropic_errors("/v1/messages", [&] {
    MessagesRequest request = parse_messages_request(call.body);
    check_model(request.chat.generation.model, /*empty_ok=*/false);
    apply_thinking(request, options_.parser_format);
    ChatPlan plan = plan_chat(model_, engine_, options_, request.chat);
    const BpeTokenizer& tokenizer = model_.tokenizer();

    auto sink = std::make_shared<MessageSink>();
    sink->meta = {new_response_id("msg_"), options_.served_model_name};
    sink->engine = &engine_;
    sink->model = &model_;
    sink->tokenizer = &tokenizer;
    sink->fields = request.chat.generation;
    sink->answer_grammar = plan.answer_grammar;
    sink->parser = make_parser(plan.parser, tokenizer);
    sink->visible = VisibleText(tokenizer, sink->fields.skip_special_tokens, plan.marker_ids);
    sink->watch = DisconnectWatch(call.client_alive);
    sink->budget = request.budget_tokens;
    const ParserFormatSpec& format = parser_format_spec(options_.parser_format);
    sink->think_close_text = format.markers[static_cast<size_t>(format.think_close)];
    sink->think_close = tokenizer.token_id(sink->think_close_text).value_or(-1);
    sink->usage.prompt_tokens = static_cast<int64_t>(plan.spec.prompt.size());
    sink->timeout_seconds = plan.spec.timeout_seconds;
    sink->streams = submit_choices(engine_, model_, sink->fields, plan.spec);
    sink->spec = std::move(plan.spec);
    const bool stream = sink->fields.stream;
    return serve_call(std::move(sink), stream);
  });
}

HttpReply OpenAiService::count_message_tokens(const RouteCall& call) {
  return anthropic_errors("/v1/messages/count_tokens", [&] {
    MessagesRequest request = parse_count_tokens_request(call.body);
    check_model(request.chat.generation.model, /*empty_ok=*/false);
    apply_thinking(request, options_.parser_format);
    const std::vector<int32_t> prompt =
        model_.control_guard().encode(render_prompt(model_, request.chat, options_.parser_format));
    return json_reply(200, count_tokens_json(static_cast<int64_t>(prompt.size())));
  });
}

}  // namespace minimax
