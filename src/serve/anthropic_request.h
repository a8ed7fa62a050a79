// Anthropic Messages API request bodies → the server's chat request: POST /v1/messages and
// POST /v1/messages/count_tokens. Pure data conversion, like serve/openai_request.h: the
// conversation becomes template messages (system first, tool_result blocks as tool messages,
// thinking blocks as the assistant's reasoning_content, tool_use blocks as its tool_calls), tools
// and tool_choice their OpenAI equivalents, so that rendering, constrained decoding and parsing
// are shared with /v1/chat/completions. Every problem throws ApiException 400 naming the field
// path ("messages[1].content[0].type"). Accepted fields and deviations: docs/api.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "serve/openai_request.h"
#include "serve/parser_format.h"

namespace minimax {

// `thinking`: absent (the model's default), {"type":"enabled","budget_tokens"},
// {"type":"disabled"} or {"type":"adaptive"}.
enum class ThinkingRequest { kDefault, kEnabled, kDisabled, kAdaptive };

struct MessagesRequest {
  // messages (template form), tools, tool_choice, parallel_tool_calls, chat_template_kwargs; and
  // in `generation`: model, max_tokens, stop (stop_sequences), temperature / top_p / top_k,
  // stream, response_grammar (output_config.format). A final assistant message is continued
  // (continue_final_message), as Anthropic continues a prefilled answer.
  ChatRequest chat;
  ThinkingRequest thinking = ThinkingRequest::kDefault;
  // enabled: the most tokens the reasoning may take before the server ends it (< max_tokens).
  std::optional<int64_t> budget_tokens;
};

// POST /v1/messages: model, max_tokens and messages are required.
MessagesRequest parse_messages_request(std::string_view body);
// POST /v1/messages/count_tokens: the same conversation fields, without max_tokens and the
// sampling fields.
MessagesRequest parse_count_tokens_request(std::string_view body);

// Puts the request's thinking into its template variables: M3's template has `thinking_mode`
// (enabled, disabled, adaptive); M2's has no switch (it always opens its reasoning), so nothing
// is set there. kDefault leaves the template's own default.
void apply_thinking(MessagesRequest& request, ParserFormat format);

}  // namespace minimax
