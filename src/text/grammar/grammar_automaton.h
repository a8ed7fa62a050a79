// A grammar run as a lazily built deterministic automaton over symbols (bytes and markers).
//
// The grammar is matched top-down like a pushdown automaton: a configuration is the set of
// stacks the input so far allows, each stack a chain of grammar positions whose top is a terminal
// (a stack with nothing left is "accepted"). Stacks are interned nodes (position, parent), so a
// configuration is a sorted list of node ids, and each distinct configuration becomes a state
// with a table of its successors by symbol, filled on first use. A token mask walks the vocabulary
// trie through these tables, so after warm-up a byte costs one table load; configurations recur
// (inside a JSON string every ordinary byte leads back to the same state), so the table stays
// small. Right recursion does not grow stacks: a rule called last in a sequence returns straight
// to its caller's caller.
//
// Not thread-safe: one automaton per request, used by the engine's loop thread.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "text/grammar/grammar.h"

namespace minimax {

class GrammarAutomaton {
 public:
  static constexpr int32_t kDead = -1;

  explicit GrammarAutomaton(std::shared_ptr<const Grammar> grammar);

  int32_t start() const { return start_; }
  // The state after `symbol` from `state`, or kDead when the grammar allows no such symbol.
  int32_t next(int32_t state, int symbol) {
    const int32_t cached = table_[static_cast<size_t>(state) * kSymbolCount + symbol];
    return cached != kUnknown ? cached : compute_next(state, symbol);
  }
  // The input that led to `state` is a complete sentence of the grammar.
  bool accepting(int32_t state) const { return accepting_[state]; }
  // Some symbol can follow (the sentence may go on).
  bool can_continue(int32_t state) const;

  const Grammar& grammar() const { return *grammar_; }
  size_t state_count() const { return accepting_.size(); }

  // Forgets every state but `state` and the start (which keep working under new ids: the
  // returned one and start()), so that a long run does not grow the tables without bound. Ids
  // of other states become invalid.
  int32_t reset_keeping(int32_t state);

 private:
  static constexpr int32_t kUnknown = -2;
  enum class PositionKind : uint8_t { kTerminal, kRule, kEnd };
  struct Node {
    int32_t position;
    int32_t parent;  // node id; 0 = the empty stack
  };

  int32_t compute_next(int32_t state, int symbol);
  // Adds to `out` the stacks that match the rest of the grammar from `position` with `parent`
  // below it, expanded until each top is a terminal.
  void close(int32_t position, int32_t parent, std::vector<int32_t>& out);
  int32_t node(int32_t position, int32_t parent);
  int32_t intern_state(std::vector<int32_t> stacks);

  std::shared_ptr<const Grammar> grammar_;
  // Every alternative's elements laid end to end, each alternative followed by an end position.
  std::vector<PositionKind> kind_;
  std::vector<int32_t> index_;                     // terminal or rule index at a position
  std::vector<std::vector<int32_t>> rule_starts_;  // first position of each alternative

  std::vector<Node> nodes_;  // nodes_[0] is the empty stack
  std::unordered_map<uint64_t, int32_t> node_ids_;
  std::vector<std::vector<int32_t>> states_;  // the stacks (node ids, sorted) of each state
  std::unordered_map<std::string, int32_t> state_ids_;
  std::vector<bool> accepting_;
  std::vector<int32_t> table_;            // states × kSymbolCount successor ids
  std::unordered_set<uint64_t> visited_;  // (position, parent) pairs seen by one close()
  int32_t start_ = 0;
};

}  // namespace minimax
