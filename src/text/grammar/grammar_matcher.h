// One request's grammar state over tokens: which tokens may come next (a bitmask over the
// vocabulary) and the advance by the token that was sampled.
//
// A token is allowed when its bytes lead from the current state to a live one (ordinary tokens,
// decided by one walk of the vocabulary trie), when it is the special token a marker symbol
// stands for and the grammar allows that marker, or when it is one of the end tokens (the stop
// tokens of the request) and the output so far is a complete sentence. Masks are cached per
// automaton state: inside a JSON string or a repeated structure the same states come back.
//
// The walk takes whole trie subtrees of text (TokenTrie::subtree_classes: ASCII of one class, or
// that and any UTF-8 character) without visiting their nodes: all of their tokens when every
// character of the class leads from the current state back to it (inside a free JSON string), or,
// inside a counted repetition (a string with maxLength), the tokens with no more characters than
// iterations are left, found by following the chain of states the class leads through
// (X_c -> X_c+1 -> ...) until it loops, dies or is kRunHorizon long. So a walk costs about the
// same at every count, whatever maxLength is.
//
// Not thread-safe; the engine's loop thread owns it.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/error.h"
#include "text/grammar/grammar_automaton.h"
#include "text/grammar/token_trie.h"

namespace minimax {

// Bit t (word t / 64, bit t % 64) set = token t allowed.
using TokenBitmask = std::vector<uint64_t>;

inline bool bitmask_test(const TokenBitmask& mask, int32_t token) {
  return (mask[static_cast<size_t>(token) >> 6] >> (token & 63)) & 1;
}

// A mask that ran past its deadline (GrammarMatcher::allowed_tokens).
class GrammarWorkExceeded : public Error {
 public:
  using Error::Error;
};

class GrammarMatcher {
 public:
  // Mask budgets count this thread's CPU time, the grammar's work, not the wall clock.
  using Clock = ThreadCpuClock;

  // Error when a marker of the grammar is not a special token of the vocabulary.
  GrammarMatcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> vocab,
                 std::vector<int32_t> end_tokens);

  // The tokens allowed next; empty of allowed tokens once finished(). A mask not cached is
  // computed until `deadline`, then abandoned with GrammarWorkExceeded: a grammar whose states
  // are expensive must not hold up the step every request shares. Error when a state exceeds
  // the automaton's limits (GrammarAutomaton::kMaxStacks).
  const TokenBitmask& allowed_tokens(Clock::time_point deadline = Clock::time_point::max());
  // The same, walked afresh without the mask cache (the automaton's tables stay warm): what a
  // state not seen before costs. For benchmarks.
  void compute_allowed_tokens(TokenBitmask& mask) {
    compute_mask(state_, mask, Clock::time_point::max());
  }
  // Advances by `token`; false (and no change) when the grammar does not allow it.
  bool accept_token(int32_t token);
  // Advances by raw bytes (tests and tools); false (and no change) when they do not fit.
  bool accept_bytes(std::string_view bytes);
  // How many of `tokens`, in order, accept_token would take from here (a speculative draft is
  // cut where it leaves the grammar); the matcher stays where it was. A walk past the
  // automaton's limits stops there.
  size_t allowed_prefix(std::span<const int32_t> tokens);

  bool accepting() const { return !finished_ && automaton_.accepting(state_); }
  bool can_continue() const { return !finished_ && automaton_.can_continue(state_); }
  bool finished() const { return finished_; }  // an end token was accepted

  size_t state_count() const { return automaton_.state_count(); }

 private:
  void compute_mask(int32_t state, TokenBitmask& mask, Clock::time_point deadline);

  // Per state and text class k (TokenTrie::kTextClasses): the state every character of class k
  // leads to (kDead when none is allowed, kMixed when they differ), and the run: how many
  // characters of class k in a row are allowed from the state, followed up to kRunHorizon
  // states ahead (kRunEndless: any number). With kRunExact set, every longer string of the class
  // is refused; without, the run is a lower bound.
  static constexpr int kClasses = TokenTrie::kTextClasses;
  static constexpr int kRunHorizon = 24;
  static constexpr uint16_t kRunUnknown = 0xffff, kRunEndless = 0x7fff, kRunExact = 0x8000;
  struct ClassSteps {
    bool known = false;  // `next` filled
    std::array<int32_t, kClasses> next{};
    std::array<uint16_t, kClasses> run{};  // kRunUnknown until asked
  };
  ClassSteps& class_steps(int32_t state);
  // Adds the tokens of trie node i's subtree that the runs from `from` of `classes` (a subset of
  // the subtree's, all useful) allow, when those runs decide every token; false otherwise.
  bool take_text_subtree(size_t i, int32_t from, uint8_t classes, TokenBitmask& mask);
  uint16_t class_run(int32_t state, int k);
  // Bit k: class k's run from `state` can spare a walk (it is not 0 without kRunExact). Every
  // run of the state is known afterwards.
  uint8_t useful_classes(int32_t state);
  static constexpr uint16_t kUsefulUnknown = 0xffff;

  std::shared_ptr<const TokenTrie> vocab_;
  GrammarAutomaton automaton_;
  std::vector<int32_t> end_tokens_;
  std::vector<int32_t> marker_tokens_;  // token id of each marker symbol
  int32_t state_;
  bool finished_ = false;
  std::unordered_map<int32_t, TokenBitmask> mask_cache_;  // by automaton state
  TokenBitmask none_;                                     // the mask once finished
  std::vector<int32_t> walk_;                             // state per trie depth during a walk
  std::vector<uint16_t> walk_chars_;                      // characters read, per trie depth
  std::vector<ClassSteps> class_steps_;                   // by automaton state
  std::vector<uint16_t> useful_;                          // useful_classes by automaton state
  std::vector<int32_t> chain_;                            // scratch of class_run
};

}  // namespace minimax
