// Anthropic Messages API response objects: the message, its usage and stop reason, the stream's
// message-level events and their SSE framing, count_tokens' answer, and the error shape
// {"type":"error","error":{"type":"invalid_request_error","message":…}}. Content blocks and their
// stream events come from serve/anthropic_stream.h. Key order follows Anthropic's responses.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "serve/api_error.h"

namespace minimax {

// Anthropic's error type for an HTTP status: 400 invalid_request_error (and other 4xx),
// 401 authentication_error, 403 permission_error, 404 not_found_error, 408 timeout_error,
// 413 request_too_large, 429 rate_limit_error, 503 overloaded_error, 5xx api_error.
std::string anthropic_error_type(int status);
// {"type":"error","error":{"type","message"}}
nlohmann::ordered_json anthropic_error_json(const ApiError& error);

// Token counts in Anthropic's terms: input_tokens excludes the prompt tokens served from the
// prefix cache, which are cache_read_input_tokens (their sum is the prompt); nothing is written to
// a cache the client pays for, so cache_creation_input_tokens is 0.
struct MessageUsage {
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t output_tokens = 0;
};
// {"input_tokens","cache_creation_input_tokens","cache_read_input_tokens","output_tokens"}
nlohmann::ordered_json message_usage_json(const MessageUsage& usage);

// The stop_reason of a finished generation: stop_sequence when a stop sequence ended it,
// max_tokens for "length", tool_use when the answer holds a tool_use block, else end_turn.
std::string anthropic_stop_reason(std::string_view engine_reason, std::string_view stop_sequence,
                                  bool has_tool_use);

struct MessageMeta {
  std::string id;  // "msg_…"
  std::string model;
};
// The whole message: {"id","type":"message","role":"assistant","model","content","stop_reason",
// "stop_sequence","usage"}; stop_reason / stop_sequence "" → null.
nlohmann::ordered_json message_json(const MessageMeta& meta, const nlohmann::ordered_json& content,
                                    std::string_view stop_reason, std::string_view stop_sequence,
                                    const MessageUsage& usage);

// Stream events (objects with their "type").
// message_start: the message with empty content and null stop_reason.
nlohmann::ordered_json message_start_event(const MessageMeta& meta, const MessageUsage& usage);
// message_delta: {"delta":{"stop_reason","stop_sequence"},"usage":{…}} (the final totals).
nlohmann::ordered_json message_delta_event(std::string_view stop_reason,
                                           std::string_view stop_sequence,
                                           const MessageUsage& usage);
nlohmann::ordered_json message_stop_event();
nlohmann::ordered_json ping_event();
// An error after the stream started: the error object, sent as event "error".
nlohmann::ordered_json error_event(const ApiError& error);

// "event: <type>\ndata: <json>\n\n": Anthropic names every event after its "type".
std::string anthropic_sse(const nlohmann::ordered_json& event);

// POST /v1/messages/count_tokens: {"input_tokens": n}.
nlohmann::ordered_json count_tokens_json(int64_t input_tokens);

}  // namespace minimax
