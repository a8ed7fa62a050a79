// The lazily built automaton of a grammar (text/grammar/grammar_automaton.h).
#include "text/grammar/grammar_automaton.h"

#include <algorithm>
#include <string>

#include "base/error.h"

namespace minimax {
namespace {

std::string state_key(const std::vector<int32_t>& stacks) {
  return std::string(reinterpret_cast<const char*>(stacks.data()), stacks.size() * sizeof(int32_t));
}

}  // namespace

GrammarAutomaton::GrammarAutomaton(std::shared_ptr<const Grammar> grammar)
    : grammar_(std::move(grammar)) {
  const Grammar& g = *grammar_;
  rule_starts_.resize(g.rules.size());
  for (size_t r = 0; r < g.rules.size(); ++r)
    for (const ElementSequence& alt : g.rules[r]) {
      rule_starts_[r].push_back(static_cast<int32_t>(kind_.size()));
      for (const GrammarElement& e : alt) {
        kind_.push_back(e.kind == GrammarElement::Kind::kRule ? PositionKind::kRule
                                                              : PositionKind::kTerminal);
        index_.push_back(e.index);
      }
      kind_.push_back(PositionKind::kEnd);
      index_.push_back(-1);
    }
  nodes_.push_back({-1, -1});
  // The start: the root rule's alternatives, as if the root were called from an empty stack.
  std::vector<int32_t> stacks;
  visited_.clear();
  for (int32_t first : rule_starts_.at(g.root)) close(first, 0, stacks);
  start_ = intern_state(std::move(stacks));
}

bool GrammarAutomaton::can_continue(int32_t state) const {
  const std::vector<int32_t>& stacks = states_[state];
  return !stacks.empty() && stacks.back() != 0;  // sorted: a non-empty stack sorts after node 0
}

int32_t GrammarAutomaton::node(int32_t position, int32_t parent) {
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(position)) << 32) |
                       static_cast<uint32_t>(parent);
  auto [it, inserted] = node_ids_.try_emplace(key, static_cast<int32_t>(nodes_.size()));
  if (inserted) nodes_.push_back({position, parent});
  return it->second;
}

void GrammarAutomaton::close(int32_t position, int32_t parent, std::vector<int32_t>& out) {
  // Different paths through nullable rules reach the same (position, parent); expanding it once
  // keeps grammars with many optional parts linear.
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(position)) << 32) |
                       static_cast<uint32_t>(parent);
  if (!visited_.insert(key).second) return;
  switch (kind_[position]) {
    case PositionKind::kTerminal:
      out.push_back(node(position, parent));
      return;
    case PositionKind::kEnd:
      if (parent == 0) {
        out.push_back(0);  // the whole sentence is complete
      } else {
        const Node below = nodes_[parent];
        close(below.position, below.parent, out);
      }
      return;
    case PositionKind::kRule: {
      // A call in last position returns where its caller would: no node for the return.
      const int32_t after = position + 1;
      const int32_t return_to = kind_[after] == PositionKind::kEnd ? parent : node(after, parent);
      for (int32_t first : rule_starts_[index_[position]]) close(first, return_to, out);
      return;
    }
  }
}

int32_t GrammarAutomaton::intern_state(std::vector<int32_t> stacks) {
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
  if (stacks.empty()) return kDead;
  auto [it, inserted] =
      state_ids_.try_emplace(state_key(stacks), static_cast<int32_t>(states_.size()));
  if (inserted) {
    accepting_.push_back(stacks.front() == 0);
    states_.push_back(std::move(stacks));
    table_.resize(states_.size() * kSymbolCount, kUnknown);
  }
  return it->second;
}

int32_t GrammarAutomaton::compute_next(int32_t state, int symbol) {
  std::vector<int32_t> stacks;
  visited_.clear();
  const std::vector<SymbolSet>& terminals = grammar_->terminals;
  for (size_t i = 0; i < states_[state].size(); ++i) {
    const int32_t id = states_[state][i];
    if (id == 0) continue;
    const Node top = nodes_[id];
    if (terminals[index_[top.position]][symbol]) close(top.position + 1, top.parent, stacks);
  }
  const int32_t next = intern_state(std::move(stacks));
  table_[static_cast<size_t>(state) * kSymbolCount + symbol] = next;
  return next;
}

int32_t GrammarAutomaton::reset_keeping(int32_t state) {
  std::vector<int32_t> kept = states_.at(state);
  std::vector<int32_t> start = states_.at(start_);
  states_.clear();
  state_ids_.clear();
  accepting_.clear();
  table_.clear();
  // Nodes stay: they are small, and the kept stacks refer to them.
  start_ = intern_state(std::move(start));
  return intern_state(std::move(kept));
}

}  // namespace minimax
