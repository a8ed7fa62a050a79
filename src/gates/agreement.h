// Teacher-forced comparison of two servers: per prompt position, does each server rank the same
// token first, and what loss (-logprob of the actual next token) does each assign.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace minimax::gates {

struct PromptPosition {
  int64_t actual_id = -1;       // the prompt token at this position
  double actual_logprob = 0.0;  // its logprob given the tokens before it
  int64_t top_id = -1;          // the server's rank-1 token here
  double top_logprob = 0.0;     // and its logprob
};

// Reads positions 1.. of a prompt_logprobs list requested with k >= 1 (position 0 is null).
// The actual token is taken from `prompt_token_ids` when the server returned them (pass nullptr
// otherwise); without them it is the entry with rank > 1 when there are two, else the single
// rank-1 entry. Throws Error naming `source` and the position when that is ambiguous.
std::vector<PromptPosition> read_prompt_positions(const nlohmann::json& prompt_logprobs,
                                                  const nlohmann::json* prompt_token_ids,
                                                  std::string_view source);

// Agreement is also counted over "decided" positions: those where either server puts at least
// this probability on its first token. Elsewhere the next token is random by construction (filler
// words, digits, keys of the synthetic tasks), the distribution is nearly flat, and which of the
// near-equal tokens ranks first is noise; the loss still covers those positions.
inline constexpr double kDecidedProbability = 0.5;

class AgreementTally {
 public:
  // Adds one text's positions from both servers; throws Error naming `source` when the two
  // disagree on the prompt's tokens (different tokenizers make the comparison meaningless).
  void add(const std::vector<PromptPosition>& a, const std::vector<PromptPosition>& b,
           std::string_view source);

  size_t positions() const { return positions_; }
  size_t same_top() const { return same_top_; }
  double agreement() const;  // same_top / positions (0 when empty)
  size_t decided_positions() const { return decided_; }
  size_t decided_same_top() const { return decided_same_top_; }
  double decided_agreement() const;  // decided_same_top / decided_positions (0 when empty)
  double mean_loss_a() const;        // nats per position
  double mean_loss_b() const;
  double loss_delta() const;  // |mean_loss_a - mean_loss_b|

 private:
  size_t positions_ = 0;
  size_t same_top_ = 0;
  size_t decided_ = 0;
  size_t decided_same_top_ = 0;
  double loss_a_ = 0.0;
  double loss_b_ = 0.0;
};

}  // namespace minimax::gates
