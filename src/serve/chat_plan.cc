// Rendering, tokenizing and planning a chat request (serve/chat_plan.h, serve/chat_prompt.h).
#include "serve/chat_plan.h"

#include "base/error.h"
#include "serve/chat_prompt.h"
#include "serve/json_schema_grammar.h"
#include "serve/tool_call_grammar.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

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

std::string render_prompt(const TextModel& model, const ChatRequest& request, ParserFormat format) {
  // Template variables are printed like message text (M2's model_identity, for one), so their
  // strings, keys included, are protected the same way.
  Json kwargs = model.control_guard().protect_json(request.chat_template_kwargs);
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

std::unique_ptr<ParsePipeline> make_parser(const ParserOptions& options,
                                           const BpeTokenizer& tokenizer) {
  try {
    return std::make_unique<ParsePipeline>(options, tokenizer);  // markers by token id
  } catch (const Error&) {
    return std::make_unique<ParsePipeline>(options);  // a tokenizer without the marker tokens
  }
}

ChatPlan plan_chat(const TextModel& model, const Engine& engine, const ServiceOptions& options,
                   const ChatRequest& request) {
  const BpeTokenizer& tokenizer = model.tokenizer();
  const ParserFormat format = options.parser_format;
  const std::vector<int32_t> prompt =
      model.control_guard().encode(render_prompt(model, request, format));

  ThinkingMode mode;
  try {
    mode = thinking_mode_from_kwargs(nlohmann::json::parse(request.chat_template_kwargs.dump()),
                                     format);
  } catch (const Error& e) {
    throw ApiException(bad_request(e.what(), "chat_template_kwargs"));
  }
  const bool tools_on = !request.tools.is_null() && options.parse_tool_calls &&
                        request.tool_choice.mode != ToolChoiceMode::kNone;
  ChatPlan plan;
  ParserOptions& parser = plan.parser;
  parser.format = format;
  parser.parse_reasoning = options.parse_reasoning;
  parser.append_think = options.append_think;
  parser.parse_tool_calls = tools_on;
  parser.initial = options.parse_reasoning
                       ? initial_reasoning_state(prompt, tokenizer, format, mode)
                       : ReasoningState::kContent;
  if (tools_on) parser.tools = nlohmann::json::parse(request.tools.dump());

  ChoiceSpec& spec = plan.spec;
  spec.prompt = prompt;
  spec.default_max_tokens = engine.options().max_model_len - static_cast<int64_t>(prompt.size());
  spec.prompt_logprobs = request.generation.prompt_logprobs.value_or(-1);
  spec.timeout_seconds = options.request_timeout_seconds;
  plan.answer_grammar = output_grammar(request, tools_on, format);
  const ParserFormatSpec& markers = parser_format_spec(format);
  if (std::shared_ptr<const Grammar> grammar = plan.answer_grammar) {
    // The output follows the grammar once the reasoning ends (or at once when it does not
    // start). The reasoning is free text that must end with the end-of-reasoning marker: the
    // model cannot skip to a tool call or stop without closing it, so what follows is always
    // constrained.
    if (parser.initial == ReasoningState::kReasoning)
      grammar = std::make_shared<const Grammar>(after_free_text(
          *grammar, markers.markers[markers.think_close], {markers.markers[markers.think_open]}));
    spec.constraint = TokenConstraint{-1, std::move(grammar)};
  }
  for (const std::string& marker : markers.markers)
    if (std::optional<int32_t> id = tokenizer.token_id(marker)) plan.marker_ids.push_back(*id);
  return plan;
}

}  // namespace minimax
