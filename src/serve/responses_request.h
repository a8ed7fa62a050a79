// OpenAI Responses API request bodies (POST /v1/responses) → the server's chat request. Pure data
// conversion, like serve/anthropic_request.h: `input` (a string, or a list of items: messages,
// function_call, function_call_output, reasoning) becomes template messages (a function_call joins
// the assistant message before it as a tool call, its output becomes a tool message, reasoning
// becomes reasoning_content), tools and tool_choice their chat forms, so that rendering,
// constrained decoding and parsing are shared with /v1/chat/completions. `instructions` and the
// conversation of `previous_response_id` are added by the handler (they need the store). Every
// problem throws ApiException 400 naming the field path ("input[1].call_id"). Accepted fields and
// deviations: docs/api.md.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "serve/openai_request.h"

namespace minimax {

struct ResponsesRequest {
  // messages: the input's items only (without instructions and the previous conversation), tools,
  // tool_choice, parallel_tool_calls; in `generation`: model, max_tokens (max_output_tokens),
  // temperature, top_p, stream, response_grammar (text.format json_schema / json_object).
  ChatRequest chat;
  std::optional<std::string> instructions;  // a system message before everything else
  std::string previous_response_id;         // "" when absent
  bool store = true;  // keep the conversation for a later previous_response_id
  // The request's settings as the response object repeats them: instructions, max_output_tokens,
  // metadata, parallel_tool_calls, previous_response_id, reasoning, store, temperature, text,
  // tool_choice, tools (in the Responses shape), top_p, truncation, user.
  nlohmann::ordered_json echo = nlohmann::ordered_json::object();
};

ResponsesRequest parse_responses_request(std::string_view body);

// The messages of a call: `instructions` as a system message first, then the stored
// conversation of previous_response_id (an array of template messages, or null), then `input`.
nlohmann::ordered_json conversation_messages(const std::optional<std::string>& instructions,
                                             const nlohmann::ordered_json& previous,
                                             const nlohmann::ordered_json& input);

}  // namespace minimax
