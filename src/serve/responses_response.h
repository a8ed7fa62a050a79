// Responses API response objects (POST /v1/responses): the response with its output items and
// usage, the stream's response-level events, their SSE framing and the stream's error event.
// Output items and their events come from serve/responses_stream.h. Key order follows OpenAI's.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "serve/api_error.h"

namespace minimax {

struct ResponseObjectMeta {
  std::string id;  // "resp_…"
  int64_t created_at = 0;
  std::string model;
};

struct ResponseUsage {
  int64_t input_tokens = 0;
  int64_t cached_tokens = 0;  // input tokens served from the prefix cache
  int64_t output_tokens = 0;
  int64_t reasoning_tokens = 0;  // output tokens generated while the model was reasoning
};
// {"input_tokens","input_tokens_details":{"cached_tokens"},"output_tokens",
// "output_tokens_details":{"reasoning_tokens"},"total_tokens"}
nlohmann::ordered_json response_usage_json(const ResponseUsage& usage);

// The response: {"id","object":"response","created_at","status","error":null,
// "incomplete_details", <the request's settings from `echo`>, "model","output","usage"}.
// `status` is "in_progress" (then usage is null), "completed" or "incomplete" (then
// incomplete_details is {"reason":"max_output_tokens"}).
nlohmann::ordered_json response_json(const ResponseObjectMeta& meta,
                                     const nlohmann::ordered_json& echo,
                                     const nlohmann::ordered_json& output, std::string_view status,
                                     const ResponseUsage* usage);

// "completed", or "incomplete" when the engine stopped at the token limit ("length").
std::string response_status(std::string_view engine_reason);

// {"type": type, "response": response} (response.created, response.in_progress,
// response.completed).
nlohmann::ordered_json response_event(std::string_view type, nlohmann::ordered_json response);
// {"type":"error","code","message","param"}: an error after the stream started.
nlohmann::ordered_json response_error_event(const ApiError& error);

// "event: <type>\ndata: <json>\n\n", with "sequence_number" set to `sequence` in the data.
std::string responses_sse(nlohmann::ordered_json event, int64_t sequence);

}  // namespace minimax
