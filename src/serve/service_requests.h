// What the chat and completion handlers share (internal to src/serve): turning a request's
// generation fields into engine requests and submitting its n choices, waiting on several
// streams, and mapping engine results (logprobs, prompt logprobs, finishes) to the response
// builders' types.
#pragma once

#include <chrono>
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
  int prompt_logprobs = -1;  // top-n per prompt position for the engine, -1 = off
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

// Polls a request's ClientAlive at most every kInterval, so a handler can ask it at every event.
class DisconnectWatch {
 public:
  static constexpr std::chrono::milliseconds kInterval{100};
  explicit DisconnectWatch(ClientAlive client_alive = {})
      : client_alive_(std::move(client_alive)) {}
  // True once the client has gone (and from then on).
  bool gone();

 private:
  ClientAlive client_alive_;
  std::chrono::steady_clock::time_point next_check_{};
  bool gone_ = false;
};

inline constexpr int kClientGone = -2;

// Waits for the next event of any unfinished stream (finished[i] marks those done); returns its
// index, -1 when all are finished, or kClientGone when `watch` sees the client leave (checked
// between waits of at most 250 ms, so a request still queued notices too).
int next_event(std::vector<std::shared_ptr<RequestStream>>& streams, std::vector<bool>& finished,
               EngineEvent& event, DisconnectWatch& watch);

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

// The error for an engine finish that is not a normal end ("timeout", "abort", "error"), or
// nullopt for "stop" / "length".
std::optional<ApiError> finish_error(const EngineEvent& event, double timeout_seconds);

// What a handler's run loop returns when the client has left (a streamed write failed, or its
// ClientAlive said so): the requests are cancelled and nothing more is written, not even an error
// event. Status 499, nginx's "client closed request": never a status a server sends on purpose,
// so it cannot be mistaken for an engine or request error.
inline constexpr int kClientClosedRequest = 499;
ApiError client_gone();
bool is_client_gone(const ApiError& error);

HttpReply json_reply(int status, const nlohmann::ordered_json& body);
HttpReply error_reply(const ApiError& error);

// The seconds since the epoch, for "created".
int64_t unix_now();

}  // namespace minimax
