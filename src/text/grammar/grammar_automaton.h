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
// to its caller's caller. A counted element (Grammar::repeats) keeps its iteration count in the
// node it returns to, so element{0,4096} needs one grammar position, not 4096 nested rules;
// unbounded counts stop at min, after which every count behaves alike.
//
// Successors are computed per group of symbols that match the same stack tops (all ordinary
// characters inside a JSON string, for instance), so a new state costs a few closures, not one
// per symbol.
//
// Not thread-safe: one automaton per request, used by the engine's loop thread. Nothing recurses
// over the grammar, so a deep grammar costs heap, not stack.
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
  static constexpr int32_t kMixed = -3;  // see multibyte_successor
  // The most stacks one state may hold: each costs work in every successor computed from the
  // state. Ordinary grammars hold tens; a state past it throws Error (docs/api.md "Limits").
  static constexpr size_t kMaxStacks = 16384;

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
  // The state every well-formed character of two to four UTF-8 bytes leads to from `state`, when
  // they all lead to one (kDead when none can start here), found without trying them: the only
  // stacks that take bytes >= 0x80 are at the start of every alternative of one rule under one
  // parent, and that rule takes exactly the multi-byte characters, each ending the rule (checked
  // once per rule; JSON string characters are such a rule). kMixed otherwise.
  int32_t multibyte_successor(int32_t state);

  const Grammar& grammar() const { return *grammar_; }
  size_t state_count() const { return accepting_.size(); }

  // Forgets every state but `state` and the start (which keep working under new ids: the
  // returned one and start()), so that a long run does not grow the tables without bound. Ids
  // of other states become invalid.
  int32_t reset_keeping(int32_t state);

 private:
  static constexpr int32_t kUnknown = -2;
  enum class PositionKind : uint8_t { kTerminal, kRule, kRepeat, kEnd };
  // A stack entry: where matching continues, the entry below it, and at a counted element the
  // iterations completed (0 elsewhere).
  struct Node {
    int32_t position;
    int32_t parent;  // node id; 0 = the empty stack
    int32_t count;
    bool operator==(const Node&) const = default;
  };
  struct NodeHash {
    size_t operator()(const Node& n) const {
      uint64_t h = static_cast<uint32_t>(n.position) * 0x9E3779B97F4A7C15ull;
      h ^= (static_cast<uint64_t>(static_cast<uint32_t>(n.parent)) << 20) + (h >> 7);
      h ^= static_cast<uint64_t>(static_cast<uint32_t>(n.count)) * 0xC2B2AE3D27D4EB4Full;
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
  // The successors of one state by group of symbols: a group is the set of the state's distinct
  // top terminals a symbol belongs to (bit t of `key` = tops[t]).
  struct Groups {
    bool built = false;
    std::vector<int32_t> tops;  // distinct terminal indexes at the state's stack tops
    std::vector<std::pair<uint64_t, int32_t>> next;  // group key → successor
  };

  int32_t compute_next(int32_t state, int symbol);
  // Adds to `out` the stacks that match the rest of the grammar from `position` with `parent`
  // below it (and `count` iterations done, at a counted element), expanded until each top is a
  // terminal.
  void close(int32_t position, int32_t parent, int32_t count, std::vector<int32_t>& out);
  int32_t node(int32_t position, int32_t parent, int32_t count);
  int32_t intern_state(std::vector<int32_t> stacks);
  Groups& groups_of(int32_t state);
  // Whether `rule` is made of terminals only and takes exactly the multi-byte UTF-8 characters,
  // each ending an alternative (multibyte_successor).
  bool takes_multibyte_characters(int32_t rule) const;

  std::shared_ptr<const Grammar> grammar_;
  // Every alternative's elements laid end to end, each alternative followed by an end position.
  std::vector<PositionKind> kind_;
  std::vector<int32_t> index_;                     // terminal or rule index at a position
  std::vector<std::vector<int32_t>> rule_starts_;  // first position of each alternative
  std::vector<int32_t> rule_of_position_;          // the rule an alternative's position is in
  std::vector<bool> first_position_;               // the first position of an alternative
  std::vector<bool> terminal_high_;                // the terminal holds a byte >= 0x80
  std::vector<bool> multibyte_rule_;               // see multibyte_successor

  std::vector<Node> nodes_;  // nodes_[0] is the empty stack
  std::unordered_map<Node, int32_t, NodeHash> node_ids_;
  std::vector<std::vector<int32_t>> states_;  // the stacks (node ids, sorted) of each state
  std::unordered_map<std::string, int32_t> state_ids_;
  std::vector<bool> accepting_;
  std::vector<int32_t> table_;                  // states × kSymbolCount successor ids
  std::vector<Groups> groups_;                  // by state, built on its first successor
  std::unordered_set<Node, NodeHash> visited_;  // (position, parent, count) seen by one close()
  std::vector<Node> pending_;                   // close()'s worklist
  int32_t start_ = 0;
};

}  // namespace minimax
