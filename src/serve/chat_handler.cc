// POST /v1/chat/completions: template, tokenize, submit n choices, parse each choice's tokens into
// reasoning / content / tool calls, and stream the deltas or return the whole message (the
// serving loop, serve/serving_loop.h, runs ChatSink).
#include <algorithm>
#include <memory>

#include "base/error.h"
#include "serve/chat_plan.h"
#include "serve/openai_service.h"
#include "serve/parse_pipeline.h"
#include "serve/serving_loop.h"

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

class ChatSink final : public OpenAiSink {
 public:
  using OpenAiSink::OpenAiSink;

  std::vector<ChoiceState> choices;
  int64_t prompt_tokens = 0, cached_tokens = 0;
  std::optional<Json> prompt_logprobs;

  void open(SinkWriter& out) override {
    for (size_t i = 0; i < choices.size(); ++i)
      if (!out.write(sse_event(chat_role_chunk(meta, static_cast<int>(i))))) return;
  }

  EventStep on_event(int i, const EngineEvent& event, SinkWriter& out) override {
    ChoiceState& choice = choices[i];
    if (event.prompt_tokens > 0) prompt_tokens = event.prompt_tokens;
    cached_tokens = std::max(cached_tokens, event.cached_prompt_tokens);
    if (!event.prompt_logprobs.empty() && !prompt_logprobs)
      prompt_logprobs =
          prompt_logprobs_json(prompt_logprob_entries(*tokenizer, event.prompt_logprobs));
    for (const TokenOutput& token : event.tokens) {
      ++choice.completion_tokens;
      const ParseDelta delta = choice.parser->push_token(token.token, visible(token));
      std::vector<TokenLogprobs> lp;
      if (token.has_logprobs) lp.push_back(token_logprobs(*tokenizer, token));
      if (fields.logprobs) choice.logprobs.insert(choice.logprobs.end(), lp.begin(), lp.end());
      if (!out.streaming()) continue;
      for (Json& chunk : chat_delta_chunks(meta, i, delta, lp, fields.logprobs)) {
        if (fields.continuous_usage_stats) chunk["usage"] = usage_json(usage());
        if (!out.write(sse_event(chunk))) return EventStep::kContinue;
      }
    }
    return EventStep::kContinue;
  }

  void on_finish(int i, const EngineEvent& event, SinkWriter& out) override {
    ChoiceState& choice = choices[i];
    const ParseDelta tail = choice.parser->finish();
    choice.finish_reason =
        chat_finish_reason(event.finish_reason, !choice.parser->result().tool_calls.empty());
    if (!out.streaming()) return;
    for (const Json& chunk : chat_delta_chunks(meta, i, tail))
      if (!out.write(sse_event(chunk))) return;
    out.write(sse_event(chat_finish_chunk(meta, i, choice.finish_reason)));
  }

  HttpReply reply() override {
    std::vector<ChatChoice> out;
    for (size_t i = 0; i < choices.size(); ++i) {
      ChoiceState& c = choices[i];
      ChatChoice choice;
      choice.index = static_cast<int>(i);
      choice.message = c.parser->result();
      choice.finish_reason = c.finish_reason;
      if (fields.logprobs) choice.logprobs = c.logprobs;
      out.push_back(std::move(choice));
    }
    return json_reply(200, chat_completion_json(meta, out, usage(), prompt_logprobs));
  }

 private:
  Usage usage() const {
    Usage u{prompt_tokens, 0, cached_tokens};
    for (const ChoiceState& c : choices) u.completion_tokens += c.completion_tokens;
    return u;
  }
  Json usage_chunk() const override { return chat_usage_chunk(meta, usage()); }
};

}  // namespace

HttpReply OpenAiService::chat_completions(const RouteCall& call) {
  ChatRequest request = parse_chat_request(call.body);
  check_model(request.generation.model);
  const BpeTokenizer& tokenizer = model_.tokenizer();
  const ChatPlan plan = plan_chat(model_, engine_, options_, request);

  auto sink = std::make_shared<ChatSink>(
      ResponseMeta{new_response_id("chatcmpl-"), unix_now(), options_.served_model_name},
      request.generation, tokenizer,
      VisibleText(tokenizer, request.generation.skip_special_tokens, plan.marker_ids));
  sink->timeout_seconds = options_.request_timeout_seconds;
  sink->prompt_tokens = static_cast<int64_t>(plan.spec.prompt.size());
  sink->watch = DisconnectWatch(call.client_alive);
  sink->streams = submit_choices(engine_, model_, request.generation, plan.spec);
  for (int i = 0; i < request.generation.n; ++i) {
    ChoiceState choice;
    choice.parser = make_parser(plan.parser, tokenizer);
    sink->choices.push_back(std::move(choice));
  }
  return serve_call(std::move(sink), request.generation.stream);
}

}  // namespace minimax
