// Anthropic Messages API response objects (serve/anthropic_response.h).
#include "serve/anthropic_response.h"

#include "serve/openai_response.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

Json null_if_empty(std::string_view text) { return text.empty() ? Json() : Json(text); }

}  // namespace

std::string anthropic_error_type(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 408:
      return "timeout_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:  // shutting down: temporary, as Anthropic's 529
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

Json anthropic_error_json(const ApiError& error) {
  Json out;
  out["type"] = "error";
  out["error"] = {{"type", anthropic_error_type(error.status)}, {"message", error.message}};
  return out;
}

Json message_usage_json(const MessageUsage& usage) {
  Json out;
  out["input_tokens"] = usage.prompt_tokens - usage.cached_tokens;
  out["cache_creation_input_tokens"] = 0;
  out["cache_read_input_tokens"] = usage.cached_tokens;
  out["output_tokens"] = usage.output_tokens;
  return out;
}

std::string anthropic_stop_reason(std::string_view engine_reason, std::string_view stop_sequence,
                                  bool has_tool_use) {
  if (engine_reason == "length") return "max_tokens";
  if (!stop_sequence.empty()) return "stop_sequence";
  return has_tool_use ? "tool_use" : "end_turn";
}

Json message_json(const MessageMeta& meta, const Json& content, std::string_view stop_reason,
                  std::string_view stop_sequence, const MessageUsage& usage) {
  Json out;
  out["id"] = meta.id;
  out["type"] = "message";
  out["role"] = "assistant";
  out["model"] = meta.model;
  out["content"] = content;
  out["stop_reason"] = null_if_empty(stop_reason);
  out["stop_sequence"] = null_if_empty(stop_sequence);
  out["usage"] = message_usage_json(usage);
  return out;
}

Json message_start_event(const MessageMeta& meta, const MessageUsage& usage) {
  Json out;
  out["type"] = "message_start";
  out["message"] = message_json(meta, Json::array(), "", "", usage);
  return out;
}

Json message_delta_event(std::string_view stop_reason, std::string_view stop_sequence,
                         const MessageUsage& usage) {
  Json out;
  out["type"] = "message_delta";
  out["delta"] = {{"stop_reason", null_if_empty(stop_reason)},
                  {"stop_sequence", null_if_empty(stop_sequence)}};
  out["usage"] = message_usage_json(usage);
  return out;
}

Json message_stop_event() { return {{"type", "message_stop"}}; }

Json ping_event() { return {{"type", "ping"}}; }

Json error_event(const ApiError& error) { return anthropic_error_json(error); }

std::string anthropic_sse(const Json& event) {
  return "event: " + event.value("type", std::string("error")) + "\ndata: " + json_text(event) +
         "\n\n";
}

Json count_tokens_json(int64_t input_tokens) { return {{"input_tokens", input_tokens}}; }

}  // namespace minimax
