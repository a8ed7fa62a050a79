// One request's grammar state over tokens: which tokens may come next (a bitmask over the
// vocabulary) and the advance by the token that was sampled.
//
// A token is allowed when its bytes lead from the current state to a live one (ordinary tokens,
// decided by one walk of the vocabulary trie), when it is the special token a marker symbol
// stands for and the grammar allows that marker, or when it is one of the end tokens (the stop
// tokens of the request) and the output so far is a complete sentence. Masks are cached per
// automaton state: inside a JSON string or a repeated structure the same states come back.
//
// Not thread-safe; the engine's loop thread owns it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/grammar/grammar_automaton.h"
#include "text/grammar/token_trie.h"

namespace minimax {

// Bit t (word t / 64, bit t % 64) set = token t allowed.
using TokenBitmask = std::vector<uint64_t>;

inline bool bitmask_test(const TokenBitmask& mask, int32_t token) {
  return (mask[static_cast<size_t>(token) >> 6] >> (token & 63)) & 1;
}

class GrammarMatcher {
 public:
  // Error when a marker of the grammar is not a special token of the vocabulary.
  GrammarMatcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> vocab,
                 std::vector<int32_t> end_tokens);

  // The tokens allowed next; empty of allowed tokens once finished().
  const TokenBitmask& allowed_tokens();
  // The same, walked afresh without the mask cache (the automaton's tables stay warm): what a
  // state not seen before costs. For benchmarks.
  void compute_allowed_tokens(TokenBitmask& mask) { compute_mask(state_, mask); }
  // Advances by `token`; false (and no change) when the grammar does not allow it.
  bool accept_token(int32_t token);
  // Advances by raw bytes (tests and tools); false (and no change) when they do not fit.
  bool accept_bytes(std::string_view bytes);

  bool accepting() const { return !finished_ && automaton_.accepting(state_); }
  bool can_continue() const { return !finished_ && automaton_.can_continue(state_); }
  bool finished() const { return finished_; }  // an end token was accepted

  size_t state_count() const { return automaton_.state_count(); }

 private:
  void compute_mask(int32_t state, TokenBitmask& mask);
  // The TokenTrie::text_classes() whose bytes all lead from `state` back to it, as bits
  // (computed once per state).
  uint8_t looping_classes(int32_t state);

  std::shared_ptr<const TokenTrie> vocab_;
  GrammarAutomaton automaton_;
  std::vector<int32_t> end_tokens_;
  std::vector<int32_t> marker_tokens_;  // token id of each marker symbol
  int32_t state_;
  bool finished_ = false;
  std::unordered_map<int32_t, TokenBitmask> mask_cache_;  // by automaton state
  TokenBitmask none_;                                     // the mask once finished
  std::vector<int32_t> walk_;                             // state per trie depth during a walk
  static constexpr uint8_t kUnknownClasses = 0xff;
  std::vector<uint8_t> looping_classes_;  // by automaton state
};

}  // namespace minimax
