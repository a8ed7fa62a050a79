// The lazily built automaton of a grammar (text/grammar/grammar_automaton.h).
#include "text/grammar/grammar_automaton.h"

#include <algorithm>
#include <set>
#include <string>

#include "base/error.h"
#include "text/grammar/utf8_decoder.h"

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
      for (size_t i = 0; i <= alt.size(); ++i) {
        rule_of_position_.push_back(static_cast<int32_t>(r));
        first_position_.push_back(i == 0);
      }
      for (const GrammarElement& e : alt) {
        switch (e.kind) {
          case GrammarElement::Kind::kTerminal:
            kind_.push_back(PositionKind::kTerminal);
            break;
          case GrammarElement::Kind::kRule:
            kind_.push_back(PositionKind::kRule);
            break;
          case GrammarElement::Kind::kRepeat:
            kind_.push_back(PositionKind::kRepeat);
            break;
        }
        index_.push_back(e.index);
      }
      kind_.push_back(PositionKind::kEnd);
      index_.push_back(-1);
    }
  for (const SymbolSet& t : g.terminals) {
    bool high = false;
    for (int b = 0x80; b < 256 && !high; ++b) high = t[b];
    terminal_high_.push_back(high);
  }
  for (size_t r = 0; r < g.rules.size(); ++r)
    multibyte_rule_.push_back(takes_multibyte_characters(static_cast<int32_t>(r)));
  nodes_.push_back({-1, -1, 0});
  // The start: the root rule's alternatives, as if the root were called from an empty stack.
  std::vector<int32_t> stacks;
  visited_.clear();
  for (int32_t first : rule_starts_.at(g.root)) close(first, 0, 0, stacks);
  start_ = intern_state(std::move(stacks));
}

bool GrammarAutomaton::can_continue(int32_t state) const {
  const std::vector<int32_t>& stacks = states_[state];
  return !stacks.empty() && stacks.back() != 0;  // sorted: a non-empty stack sorts after node 0
}

bool GrammarAutomaton::takes_multibyte_characters(int32_t rule) const {
  const std::vector<SymbolSet>& terminals = grammar_->terminals;
  bool any_high = false;
  for (int32_t first : rule_starts_[rule]) {
    if (kind_[first] == PositionKind::kEnd) return false;  // an empty alternative
    for (int32_t p = first; kind_[p] != PositionKind::kEnd; ++p) {
      if (kind_[p] != PositionKind::kTerminal) return false;
      any_high = any_high || terminal_high_[index_[p]];
    }
  }
  if (!any_high) return false;
  // Run the alternatives side by side over every multi-byte character, following a UTF-8
  // decoder: inside a character some alternative must go on and none may end; at its end every
  // surviving alternative must end (so the character leaves no partial match behind).
  std::set<std::pair<std::vector<int32_t>, int>> seen;
  std::vector<std::pair<std::vector<int32_t>, int>> todo{{rule_starts_[rule], 0}};
  while (!todo.empty()) {
    auto [positions, state] = std::move(todo.back());
    todo.pop_back();
    for (int b = 0x80; b < 0x100; ++b) {
      const int next_state = utf8_step(state, static_cast<uint8_t>(b));
      if (next_state < 0) continue;
      std::vector<int32_t> next;
      for (int32_t p : positions)
        if (kind_[p] == PositionKind::kTerminal && terminals[index_[p]][b]) next.push_back(p + 1);
      if (next.empty()) return false;
      for (int32_t p : next)
        if ((kind_[p] == PositionKind::kEnd) != (next_state == 0)) return false;
      if (next_state != 0 && seen.insert({next, next_state}).second)
        todo.push_back({std::move(next), next_state});
    }
  }
  return true;
}

int32_t GrammarAutomaton::multibyte_successor(int32_t state) {
  int32_t parent = -1, rule = -1;
  for (int32_t id : states_[state]) {
    if (id == 0) continue;
    const Node top = nodes_[id];
    if (!terminal_high_[index_[top.position]]) continue;
    const int32_t r = rule_of_position_[top.position];
    if (!first_position_[top.position] || !multibyte_rule_[r]) return kMixed;
    if (parent < 0) parent = top.parent, rule = r;
    if (top.parent != parent || r != rule) return kMixed;
  }
  if (parent < 0) return kDead;  // no stack takes a byte >= 0x80
  // Every alternative of the rule must be there under that parent, or some characters are not.
  size_t present = 0;
  for (int32_t id : states_[state]) {
    const Node top = nodes_[id];
    present += id != 0 && top.parent == parent && rule_of_position_[top.position] == rule &&
               first_position_[top.position];
  }
  if (present != rule_starts_[rule].size()) return kMixed;
  const int32_t lead = next(state, 0xC2);  // U+0080 stands for all of them
  return lead == kDead ? kDead : next(lead, 0x80);
}

int32_t GrammarAutomaton::node(int32_t position, int32_t parent, int32_t count) {
  auto [it, inserted] =
      node_ids_.try_emplace(Node{position, parent, count}, static_cast<int32_t>(nodes_.size()));
  if (inserted) nodes_.push_back({position, parent, count});
  return it->second;
}

void GrammarAutomaton::close(int32_t position, int32_t parent, int32_t count,
                             std::vector<int32_t>& out) {
  // A worklist, not recursion: chains of calls and returns are as long as the grammar is deep,
  // and a request's grammar must not be able to exhaust the stack. The order does not matter
  // (intern_state sorts the stacks).
  pending_.clear();
  pending_.push_back({position, parent, count});
  while (!pending_.empty()) {
    const Node at = pending_.back();
    pending_.pop_back();
    // Different paths through nullable rules reach the same (position, parent, count);
    // expanding it once keeps grammars with many optional parts linear.
    if (!visited_.insert(at).second) continue;
    switch (kind_[at.position]) {
      case PositionKind::kTerminal:
        out.push_back(node(at.position, at.parent, 0));
        if (out.size() > kMaxStacks)
          fail(
              "grammar: a state holds more than {} stacks (the limit; ambiguous repetitions "
              "such as (a{{0,100}}){{0,100}} multiply them)",
              kMaxStacks);
        break;
      case PositionKind::kEnd:
        if (at.parent == 0) {
          out.push_back(0);  // the whole sentence is complete
        } else {
          const Node below = nodes_[at.parent];
          pending_.push_back({below.position, below.parent, below.count});
        }
        break;
      case PositionKind::kRule: {
        // A call in last position returns where its caller would: no node for the return.
        const int32_t after = at.position + 1;
        const int32_t return_to =
            kind_[after] == PositionKind::kEnd ? at.parent : node(after, at.parent, 0);
        for (int32_t first : rule_starts_[index_[at.position]])
          pending_.push_back({first, return_to, 0});
        break;
      }
      case PositionKind::kRepeat: {
        // `count` iterations are done: leave when that is enough, start another while allowed.
        // The body returns to this position with the count one higher (a plain return node
        // (position, parent, 0) is the same thing as no iteration done yet).
        const Repetition& rep = grammar_->repeats[index_[at.position]];
        if (at.count >= rep.min) pending_.push_back({at.position + 1, at.parent, 0});
        if (rep.max < 0 || at.count < rep.max) {
          // Past min an unbounded count no longer matters: it stays at min, so the states loop.
          const int32_t done = rep.max < 0 ? std::min(at.count + 1, rep.min) : at.count + 1;
          const int32_t frame = node(at.position, at.parent, done);
          for (int32_t first : rule_starts_[rep.rule]) pending_.push_back({first, frame, 0});
        }
        break;
      }
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

GrammarAutomaton::Groups& GrammarAutomaton::groups_of(int32_t state) {
  if (groups_.size() <= static_cast<size_t>(state)) groups_.resize(states_.size());
  Groups& groups = groups_[state];
  if (!groups.built) {
    for (int32_t id : states_[state])
      if (id != 0) groups.tops.push_back(index_[nodes_[id].position]);
    std::sort(groups.tops.begin(), groups.tops.end());
    groups.tops.erase(std::unique(groups.tops.begin(), groups.tops.end()), groups.tops.end());
    groups.built = true;
  }
  return groups;
}

int32_t GrammarAutomaton::compute_next(int32_t state, int symbol) {
  const std::vector<SymbolSet>& terminals = grammar_->terminals;
  // Symbols in the same terminals of this state's tops have the same successor: compute it once
  // per group (with more than 64 distinct tops, once per symbol). intern_state below does not
  // resize groups_, so the reference holds.
  Groups& groups = groups_of(state);
  const bool keyed = groups.tops.size() <= 64;
  uint64_t key = 0;
  if (keyed) {
    for (size_t t = 0; t < groups.tops.size(); ++t)
      if (terminals[groups.tops[t]][symbol]) key |= uint64_t{1} << t;
    for (const auto& [k, successor] : groups.next)
      if (k == key) return table_[static_cast<size_t>(state) * kSymbolCount + symbol] = successor;
  }
  std::vector<int32_t> stacks;
  visited_.clear();
  for (size_t i = 0; i < states_[state].size(); ++i) {
    const int32_t id = states_[state][i];
    if (id == 0) continue;
    const Node top = nodes_[id];
    if (terminals[index_[top.position]][symbol]) close(top.position + 1, top.parent, 0, stacks);
  }
  const int32_t next = intern_state(std::move(stacks));
  if (keyed) groups.next.emplace_back(key, next);
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
  groups_.clear();
  // Nodes stay: they are small, and the kept stacks refer to them.
  start_ = intern_state(std::move(start));
  return intern_state(std::move(kept));
}

}  // namespace minimax
