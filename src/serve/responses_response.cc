// Responses API response objects and stream framing (serve/responses_response.h).
#include "serve/responses_response.h"

#include <fmt/format.h>

#include "serve/openai_response.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

}  // namespace

Json response_usage_json(const ResponseUsage& usage) {
  return {{"input_tokens", usage.input_tokens},
          {"input_tokens_details", {{"cached_tokens", usage.cached_tokens}}},
          {"output_tokens", usage.output_tokens},
          {"output_tokens_details", {{"reasoning_tokens", usage.reasoning_tokens}}},
          {"total_tokens", usage.input_tokens + usage.output_tokens}};
}

Json response_json(const ResponseObjectMeta& meta, const Json& echo, const Json& output,
                   std::string_view status, const ResponseUsage* usage) {
  Json out = {{"id", meta.id},    {"object", "response"}, {"created_at", meta.created_at},
              {"status", status}, {"error", nullptr},     {"incomplete_details", nullptr}};
  if (status == "incomplete") out["incomplete_details"] = {{"reason", "max_output_tokens"}};
  out["model"] = meta.model;
  out["output"] = output;
  for (const auto& [key, value] : echo.items()) out[key] = value;
  out["usage"] = usage ? response_usage_json(*usage) : Json(nullptr);
  return out;
}

std::string response_status(std::string_view engine_reason) {
  return engine_reason == "length" ? "incomplete" : "completed";
}

Json response_event(std::string_view type, Json response) {
  return {{"type", type}, {"response", std::move(response)}};
}

Json response_error_event(const ApiError& error) {
  return {{"type", "error"},
          {"code", error.type},
          {"message", error.message},
          {"param", error.param.empty() ? Json(nullptr) : Json(error.param)}};
}

std::string responses_sse(Json event, int64_t sequence) {
  event["sequence_number"] = sequence;
  return fmt::format("event: {}\ndata: {}\n\n", event["type"].get<std::string>(), json_text(event));
}

}  // namespace minimax
