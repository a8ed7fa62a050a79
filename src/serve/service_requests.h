// What the generating handlers share (internal to src/serve): turning a request's generation
// fields into engine requests and submitting its n choices, and mapping engine results (logprobs,
// prompt logprobs, finishes) to the response builders' types.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "runtime/engine.h"
#include "runtime/request_stream.h"
#include "runtime/text_model.h"
#include "serve/api_error.h"
#include "serve/http_server.h"
#include "serve/openai_request.h"
#include "serve/openai_response.h"

namespace minimax {

struct ChoiceSpec {
  std::vector<int32_t> prompt;
  // Used when the request sets no max_tokens (chat: the rest of the context, as vLLM does).
  int64_t default_max_tokens = 16;
  std::optional<TokenConstraint> constraint;  // tool_choice required / named, response_format
  int prompt_logprobs = -1;                   // top-n per prompt position for the engine, -1 = off
  double timeout_seconds = 0;
  // The request field that holds the prompt, named by errors about it ("prompt" in completions).
  std::string prompt_field = "messages";
};

// Submits the request's n choices (seeds seed, seed+1, … when a seed is given; fresh random
// seeds otherwise). Bad values → ApiException 400 naming the field; a full queue → 429. On an
// error, choices already submitted are cancelled.
std::vector<std::shared_ptr<RequestStream>> submit_choices(Engine& engine, const TextModel& model,
                                                           const GenerationFields& fields,
                                                           const ChoiceSpec& spec);

void cancel_all(std::vector<std::shared_ptr<RequestStream>>& streams);

// The text a generated token adds to a reply. With `skip_special_tokens` (the request's field,
// on by default as in vLLM), a special token adds none, so an end-of-message generated under
// `ignore_eos` or a role header is not spelled out, except the tokens in `kept` (chat: the
// format's markers, which the parsers consume and never show). Logprobs still name every token.
class VisibleText {
 public:
  VisibleText() = default;
  VisibleText(const BpeTokenizer& tokenizer, bool skip_special, std::vector<int32_t> kept = {})
      : tokenizer_(&tokenizer), skip_special_(skip_special), kept_(std::move(kept)) {}
  std::string_view operator()(const TokenOutput& token) const;

 private:
  const BpeTokenizer* tokenizer_ = nullptr;
  bool skip_special_ = false;
  std::vector<int32_t> kept_;
};

// A generated token's logprobs in the builders' shape (token text = its bytes).
TokenLogprobs token_logprobs(const BpeTokenizer& tokenizer, const TokenOutput& token);
std::vector<std::optional<PromptTokenLogprobs>> prompt_logprob_entries(
    const BpeTokenizer& tokenizer, const std::vector<std::optional<PromptLogprob>>& positions);

HttpReply json_reply(int status, const nlohmann::ordered_json& body);
HttpReply error_reply(const ApiError& error);

// The seconds since the epoch, for "created".
int64_t unix_now();

}  // namespace minimax
