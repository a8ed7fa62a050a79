// OpenAI-API requests over the gates' HTTP client, and reading chat answers.
#include "gates/openai_client.h"

#include <cctype>

namespace minimax::gates {
namespace {

using json = nlohmann::json;

// The server's own words from an OpenAI error body, or the start of whatever it sent.
std::string server_message(const std::string& body) {
  const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object() && parsed.contains("error")) {
    const json& error = parsed["error"];
    if (error.is_object() && error.contains("message") && error["message"].is_string())
      return error["message"].get<std::string>();
    if (error.is_string()) return error.get<std::string>();
  }
  return body.size() > 200 ? body.substr(0, 200) + "..." : body;
}

}  // namespace

OpenAiClient::OpenAiClient(HttpUrl url, std::string api_key, std::string model,
                           double timeout_seconds)
    : http_(std::move(url), std::move(api_key), timeout_seconds), model_(std::move(model)) {}

json OpenAiClient::post(const char* path, nlohmann::ordered_json request) const {
  if (!model_.empty()) request["model"] = model_;
  const HttpResponse response = http_.post_json(path, request.dump());
  if (response.status != 200)
    fail("{}{}: HTTP {}: {}", url().root(), path, response.status, server_message(response.body));
  json parsed = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object())
    fail("{}{}: the reply is not a JSON object", url().root(), path);
  return parsed;
}

json OpenAiClient::chat(nlohmann::ordered_json request) const {
  return post("/v1/chat/completions", request);
}

json OpenAiClient::completion(nlohmann::ordered_json request) const {
  return post("/v1/completions", request);
}

void OpenAiClient::resolve_model() {
  const HttpResponse response = http_.get("/v1/models");
  if (response.status != 200)
    fail("{}/v1/models: HTTP {}: {}", url().root(), response.status, server_message(response.body));
  if (!model_.empty()) return;
  const json parsed = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || !parsed.contains("data") || !parsed["data"].is_array() ||
      parsed["data"].empty() || !parsed["data"][0].is_object() ||
      !parsed["data"][0].contains("id") || !parsed["data"][0]["id"].is_string())
    fail("{}/v1/models: no model id in data[0].id; pass --model", url().root());
  model_ = parsed["data"][0]["id"].get<std::string>();
}

ChatAnswer read_chat_answer(const json& response) {
  if (!response.contains("choices") || !response["choices"].is_array() ||
      response["choices"].empty() || !response["choices"][0].is_object())
    fail("chat completion: choices[0] is missing");
  ChatAnswer answer;
  answer.choice = response["choices"][0];
  const json& choice = answer.choice;
  if (!choice.contains("message") || !choice["message"].is_object())
    fail("chat completion: choices[0].message is missing or not an object");
  const json& message = choice["message"];
  auto text_field = [&](const char* name) -> std::string {
    auto it = message.find(name);
    if (it == message.end() || it->is_null()) return "";
    if (!it->is_string()) fail("chat completion: choices[0].message.{} is not a string", name);
    return it->get<std::string>();
  };
  answer.content = text_field("content");
  answer.reasoning = text_field("reasoning_content");
  if (answer.reasoning.empty()) answer.reasoning = text_field("reasoning");
  auto finish = choice.find("finish_reason");
  if (finish != choice.end() && finish->is_string())
    answer.finish_reason = finish->get<std::string>();
  auto calls = message.find("tool_calls");
  if (calls != message.end() && !calls->is_null()) {
    if (!calls->is_array()) fail("chat completion: choices[0].message.tool_calls is not a list");
    answer.tool_calls = *calls;
  }
  return answer;
}

std::string final_answer_text(const std::string& content,
                              const std::vector<std::string>& think_closes) {
  std::string_view text = content;
  // After the last of the markers, whichever it is (no marker contains another).
  for (std::string_view end_marker : think_closes) {
    const size_t at = text.rfind(end_marker);
    if (at != std::string_view::npos) text.remove_prefix(at + end_marker.size());
  }
  return std::string(trim_whitespace(text));
}

}  // namespace minimax::gates
