// The OpenAI-API calls the gates make (chat completions, completions, model list) and the
// reading of a chat answer out of a response.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gates/http_client.h"

namespace minimax::gates {

class OpenAiClient {
 public:
  // `model` "" means: ask GET /v1/models and use the first id (see resolve_model).
  OpenAiClient(HttpUrl url, std::string api_key, std::string model, double timeout_seconds = 600.0);

  // POST /v1/chat/completions and /v1/completions with "model" filled in. A reply other than
  // 200 with a JSON object throws Error naming the URL, the status and the server's message;
  // a transport failure throws ConnectionError.
  nlohmann::json chat(nlohmann::ordered_json request) const;
  nlohmann::json completion(nlohmann::ordered_json request) const;

  // Checks the server answers GET /v1/models and fills the model name when none was given.
  void resolve_model();
  const std::string& model() const { return model_; }
  const HttpUrl& url() const { return http_.url(); }

 private:
  nlohmann::json post(const char* path, nlohmann::ordered_json request) const;

  HttpClient http_;
  std::string model_;
};

// The parts of choices[0] of a chat completion the gates look at.
struct ChatAnswer {
  std::string content;    // "" when null
  std::string reasoning;  // reasoning_content (or reasoning); "" when absent
  std::string finish_reason;
  nlohmann::json tool_calls = nlohmann::json::array();
  nlohmann::json choice;  // choices[0] as returned, for the logprob checks
};
// Throws Error naming the missing or mistyped field.
ChatAnswer read_chat_answer(const nlohmann::json& response);

// The answer text to compare: content with any reasoning block the server left in it removed
// (a server without a reasoning parser returns "...</mm:think>" or "<think>...</think>" in
// content: everything up to the last of `think_closes`) and surrounding whitespace trimmed.
std::string final_answer_text(const std::string& content,
                              const std::vector<std::string>& think_closes);

}  // namespace minimax::gates
