// POST /v1/chat/completions: template, tokenize, submit n choices, parse each choice's tokens into
// reasoning / content / tool calls, and stream the deltas or return the whole message.
#include <algorithm>
#include <memory>

#include "base/error.h"
#include "serve/chat_prompt.h"
#include "serve/json_schema_grammar.h"
#include "serve/openai_service.h"
#include "serve/parse_pipeline.h"
#include "serve/service_requests.h"
#include "serve/tool_call_grammar.h"

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

std::unique_ptr<ParsePipeline> make_parser(const ParserOptions& options,
                                           const BpeTokenizer& tokenizer) {
  try {
    return std::make_unique<ParsePipeline>(options, tokenizer);  // markers by token id
  } catch (const Error&) {
    return std::make_unique<ParsePipeline>(options);  // a tokenizer without the marker tokens
  }
}

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

std::string render_prompt(const TextModel& model, const ChatRequest& request, ParserFormat format) {
  Json kwargs = request.chat_template_kwargs;
  if (!request.tools.is_null()) kwargs["tools"] = model.control_guard().protect_json(request.tools);
  const ParserFormatSpec& spec = parser_format_spec(format);
  std::vector<std::string> think;
  for (int marker : {spec.think_open, spec.think_close})
    if (marker >= 0) think.push_back(spec.markers[static_cast<size_t>(marker)]);
  try {
    std::string text =
        model.render_chat(model.control_guard().protect_messages(request.messages, think), kwargs,
                          request.add_generation_prompt && !request.continue_final_message);
    if (request.continue_final_message) {
      const std::string end = parser_format_spec(format).end_of_message;
      const size_t at = text.rfind(end);
      if (at != std::string::npos &&
          text.find_first_not_of("\n", at + end.size()) == std::string::npos)
        text.resize(at);
    }
    return text;
  } catch (const ApiException&) {
    throw;
  } catch (const Error& e) {
    throw ApiException(bad_request(fmt::format("chat template: {}", e.what()), "messages"));
  }
}

namespace {

// The grammar the answer must follow: a tool-call block for tool_choice required or named (its
// arguments valid under the tools' schemas), else the response_format's, else none.
std::shared_ptr<const Grammar> output_grammar(const ChatRequest& request, bool tools_on,
                                              ParserFormat format) {
  const ToolChoiceMode mode = request.tool_choice.mode;
  if (!tools_on || (mode != ToolChoiceMode::kRequired && mode != ToolChoiceMode::kNamed))
    return request.generation.response_grammar;
  if (request.generation.response_grammar)
    throw ApiException(bad_request(
        "response_format: a JSON response_format cannot be combined with tool_choice required "
        "or a named tool (the answer is a tool call)",
        "response_format"));
  try {
    return std::make_shared<const Grammar>(
        tool_call_grammar(format, request.tools, request.tool_choice.name,
                          request.parallel_tool_calls && mode == ToolChoiceMode::kRequired));
  } catch (const SchemaError& e) {
    throw ApiException(bad_request(fmt::format("{}: {}", e.path(), e.what()), e.path()));
  }
}

}  // namespace

HttpReply OpenAiService::chat_completions(std::string_view body, const ClientAlive& client_alive) {
  ChatRequest request = parse_chat_request(body);
  if (!request.generation.model.empty() && request.generation.model != options_.served_model_name)
    return error_reply(model_not_found(request.generation.model));
  const BpeTokenizer& tokenizer = model_.tokenizer();
  const ParserFormat format = options_.parser_format;

  const std::string prompt_text = render_prompt(model_, request, format);
  const std::vector<int32_t> prompt = model_.control_guard().encode(prompt_text);

  ThinkingMode mode;
  try {
    mode = thinking_mode_from_kwargs(nlohmann::json::parse(request.chat_template_kwargs.dump()),
                                     format);
  } catch (const Error& e) {
    throw ApiException(bad_request(e.what(), "chat_template_kwargs"));
  }
  const bool tools_on = !request.tools.is_null() && options_.parse_tool_calls &&
                        request.tool_choice.mode != ToolChoiceMode::kNone;
  ParserOptions parser;
  parser.format = format;
  parser.parse_reasoning = options_.parse_reasoning;
  parser.parse_tool_calls = tools_on;
  parser.initial = options_.parse_reasoning
                       ? initial_reasoning_state(prompt, tokenizer, format, mode)
                       : ReasoningState::kContent;
  if (tools_on) parser.tools = nlohmann::json::parse(request.tools.dump());

  ChoiceSpec spec;
  spec.prompt = prompt;
  spec.default_max_tokens = engine_.options().max_model_len - static_cast<int64_t>(prompt.size());
  spec.prompt_logprobs = request.generation.prompt_logprobs.value_or(-1);
  spec.timeout_seconds = options_.request_timeout_seconds;
  if (std::shared_ptr<const Grammar> grammar = output_grammar(request, tools_on, format)) {
    // The output follows the grammar once the reasoning ends (or at once when it does not
    // start). The reasoning is free text that must end with the end-of-reasoning marker: the
    // model cannot skip to a tool call or stop without closing it, so what follows is always
    // constrained.
    if (parser.initial == ReasoningState::kReasoning) {
      const ParserFormatSpec& markers = parser_format_spec(format);
      grammar = std::make_shared<const Grammar>(after_free_text(
          *grammar, markers.markers[markers.think_close], {markers.markers[markers.think_open]}));
    }
    spec.constraint = TokenConstraint{-1, std::move(grammar)};
  }

  auto call = std::make_shared<ChatCall>();
  call->meta = {new_response_id("chatcmpl-"), unix_now(), options_.served_model_name};
  call->fields = request.generation;
  call->tokenizer = &tokenizer;
  call->timeout_seconds = options_.request_timeout_seconds;
  call->prompt_tokens = static_cast<int64_t>(prompt.size());
  call->watch = DisconnectWatch(client_alive);
  std::vector<int32_t> markers;
  for (const std::string& marker : parser_format_spec(format).markers)
    if (std::optional<int32_t> id = tokenizer.token_id(marker)) markers.push_back(*id);
  call->visible = VisibleText(tokenizer, request.generation.skip_special_tokens, markers);
  call->streams = submit_choices(engine_, model_, request.generation, spec);
  for (int i = 0; i < request.generation.n; ++i) {
    ChoiceState choice;
    choice.parser = make_parser(parser, tokenizer);
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
