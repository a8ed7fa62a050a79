// OpenAI request bodies → typed requests: POST /v1/chat/completions and POST /v1/completions.
// Pure data conversion (no engine, no sockets): every field is type- and range-checked, and any
// problem throws ApiException with status 400, a message and `param` naming the field path
// ("messages[2].role", "temperature"). Unknown fields are ignored, as OpenAI does; fields we
// cannot honour (logit_bias, suffix, several prompts...) are rejected
// rather than silently dropped. Accepted fields and each deviation: docs/api.md.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/sampler.h"
#include "text/grammar/grammar.h"

namespace minimax {

// Fields shared by chat and completions requests.
struct GenerationFields {
  std::string model;  // "" when absent (the server then uses its served model)
  SamplingOverrides sampling;
  // max_completion_tokens, else max_tokens (> 0). Chat: nullopt when absent (the server fills in
  // max_model_len - prompt, as vLLM does). Completions: 16 when absent (OpenAI's default).
  std::optional<int64_t> max_tokens;
  std::vector<std::string> stop;        // `stop`: string or array, each non-empty
  std::vector<int32_t> stop_token_ids;  // vLLM extension
  int n = 1;                            // 1..8; the server runs n engine requests
  bool stream = false;
  bool include_usage = false;           // stream_options.include_usage
  bool continuous_usage_stats = false;  // stream_options.continuous_usage_stats (vLLM)
  bool logprobs = false;                // chat: `logprobs`; completions: `logprobs` != null
  int top_logprobs = 0;                 // chat: top_logprobs; completions: the legacy int
  std::optional<int> prompt_logprobs;   // vLLM extension: top-n per prompt token (0..20)
  bool ignore_eos = false;              // vLLM extension
  bool skip_special_tokens = true;      // vLLM extension (the text only; logprobs name all)
  // response_format json_object / json_schema: the grammar the output must follow (compiled
  // while parsing, so an unsupported schema is a 400 naming its keyword); null for text.
  std::shared_ptr<const Grammar> response_grammar;
};

enum class ToolChoiceMode { kAuto, kNone, kRequired, kNamed };

struct ToolChoice {
  ToolChoiceMode mode = ToolChoiceMode::kAuto;
  std::string name;  // kNamed: the function, always one of the request's tools
};

struct ChatRequest {
  GenerationFields generation;
  // Ready for the chat template (TextModel::render_chat): one object per message with "role"
  // (system | user | assistant | tool; "developer" becomes "system"), "content" (a string; text
  // parts concatenated as the M2 template does; null only for an assistant message without
  // content), and as given:
  // "name", "tool_call_id" (tool), "reasoning_content" (assistant; `reasoning` is accepted as an
  // alias and stored here), "tool_calls" (assistant; each {"id", "type": "function", "function":
  // {"name", "arguments": <object>}} — a string `arguments` is parsed to an object, as vLLM does).
  // Other keys of a message (e.g. the M2 template's current_date) are passed through unchanged.
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  // The request's `tools` as given (each {"type":"function","function":{"name",...}}), or null
  // when absent or empty. For the template and for ParserOptions::tools.
  nlohmann::ordered_json tools;
  // Absent: auto with tools, none without. "required"/named need tools.
  ToolChoice tool_choice;
  bool parallel_tool_calls = true;
  // Passed to the template as extra variables (e.g. {"thinking_mode": "enabled"}); an object.
  nlohmann::ordered_json chat_template_kwargs = nlohmann::ordered_json::object();
  bool add_generation_prompt = true;    // vLLM extension
  bool continue_final_message = false;  // vLLM extension; excludes add_generation_prompt
};

struct CompletionRequest {
  GenerationFields generation;
  // Exactly one of the two: a text prompt, or token ids (non-empty).
  std::optional<std::string> prompt_text;
  std::vector<int32_t> prompt_tokens;
  bool echo = false;  // the prompt is prepended to the returned text
};

// Throw ApiException (status 400) naming the field at fault.
ChatRequest parse_chat_request(std::string_view body);
CompletionRequest parse_completion_request(std::string_view body);

}  // namespace minimax
