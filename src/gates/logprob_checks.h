// Validators for the logprobs a server returns: chat `logprobs.content` (OpenAI shape) and the
// vLLM `prompt_logprobs` extension. Each returns the problems found, one sentence each naming the
// field at fault; an empty list means the shape and the numbers are sound.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace minimax::gates {

struct LogprobCheckOptions {
  int top_logprobs = 0;                   // requested top_logprobs (0: top lists not checked)
  bool greedy = false;                    // temperature 0: the chosen token must be a top-1 token
  double tolerance = 1e-3;                // nats, for equal-logprob and ordering comparisons
  std::optional<int64_t> expected_count;  // usage token count the list must match, if known
};

// `choice` is choices[i] of a chat completion: checks choice.logprobs.content[*].
std::vector<std::string> check_chat_logprobs(const nlohmann::json& choice,
                                             const LogprobCheckOptions& options);

// `response` is a whole /v1/completions (or chat) response requested with prompt_logprobs = k:
// the list is read from the top level or from choices[0] (vLLM puts it in either place).
// Checks: one entry per prompt token, the first null, every other entry a map from token id to
// {logprob, rank, decoded_token} with finite logprobs <= 0, ranks >= 1, a rank-1 entry, at most
// k + 1 entries, and logprobs that do not increase with rank.
std::vector<std::string> check_prompt_logprobs(const nlohmann::json& response,
                                               const LogprobCheckOptions& options);

// The prompt_logprobs list of a response (top level or choices[0]); nullptr when absent.
const nlohmann::json* find_prompt_logprobs(const nlohmann::json& response);

}  // namespace minimax::gates
