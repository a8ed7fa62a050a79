// Grammar building, the left-recursion check, and the printable form (text/grammar/grammar.h).
#include "text/grammar/grammar.h"

#include <fmt/format.h>

#include "base/error.h"

namespace minimax {
namespace {

std::string symbol_text(int symbol) {
  if (symbol >= 256) return fmt::format("<marker{}>", symbol - 256);  // see Grammar::markers
  if (symbol >= 0x21 && symbol < 0x7f && symbol != '\\' && symbol != ']' && symbol != '-' &&
      symbol != '^')
    return std::string(1, static_cast<char>(symbol));
  return fmt::format("\\x{:02x}", symbol);
}

std::string set_text(const SymbolSet& set) {
  if (set.count() == 1)
    for (int s = 0; s < kSymbolCount; ++s)
      if (set[s]) return s >= 256 ? symbol_text(s) : "[" + symbol_text(s) + "]";
  std::string text = "[";
  for (int s = 0; s < kSymbolCount;) {
    if (!set[s]) {
      ++s;
      continue;
    }
    int e = s;
    while (e + 1 < kSymbolCount && set[e + 1] && e + 1 != 256) ++e;
    text += symbol_text(s);
    if (e > s) text += "-" + symbol_text(e);
    s = e + 1;
  }
  return text + "]";
}

}  // namespace

std::string Grammar::to_string() const {
  std::string text;
  for (size_t r = 0; r < rules.size(); ++r) {
    text += fmt::format("{}{} ::=", static_cast<int32_t>(r) == root ? "*" : "", rule_names[r]);
    for (size_t a = 0; a < rules[r].size(); ++a) {
      if (a > 0) text += " |";
      if (rules[r][a].empty()) text += " ()";
      for (const GrammarElement& e : rules[r][a]) {
        text += " ";
        switch (e.kind) {
          case GrammarElement::Kind::kTerminal:
            text += set_text(terminals[e.index]);
            break;
          case GrammarElement::Kind::kRule:
            text += rule_names[e.index];
            break;
          case GrammarElement::Kind::kRepeat: {
            const Repetition& rep = repeats[e.index];
            text += rep.max < 0
                        ? fmt::format("{}{{{},}}", rule_names[rep.rule], rep.min)
                        : fmt::format("{}{{{},{}}}", rule_names[rep.rule], rep.min, rep.max);
            break;
          }
        }
      }
    }
    text += "\n";
  }
  return text;
}

Grammar after_free_text(Grammar grammar, std::string_view end_marker,
                        const std::vector<std::string>& free_markers) {
  GrammarBuilder b;
  // The builder starts from the grammar's own rules, terminals and markers, so indexes hold.
  b.grammar_ = std::move(grammar);
  const int32_t old_root = b.grammar_.root;
  SymbolSet free;
  for (int c = 0; c < 256; ++c) free.set(c);
  for (const std::string& m : free_markers) free |= b.terminal_set(b.marker(m));
  const int32_t text = b.star("free", {b.terminal(free)});
  const int32_t root =
      b.choice("after_free",
               {{GrammarBuilder::ref(text), b.marker(end_marker), GrammarBuilder::ref(old_root)}});
  return b.build(root);
}

ElementSequence concat(ElementSequence a, const ElementSequence& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

int32_t GrammarBuilder::new_rule(std::string_view name) {
  if (grammar_.rules.size() >= kMaxGrammarRules)
    fail("grammar: more than {} rules (the limit on one request's grammar)", kMaxGrammarRules);
  grammar_.rules.emplace_back();
  grammar_.rule_names.push_back(
      fmt::format("{}-{}", name.empty() ? "rule" : name, grammar_.rules.size() - 1));
  return static_cast<int32_t>(grammar_.rules.size() - 1);
}

void GrammarBuilder::add_alternative(int32_t rule, ElementSequence sequence) {
  grammar_.rules.at(rule).push_back(std::move(sequence));
}

GrammarElement GrammarBuilder::terminal(const SymbolSet& symbols) {
  std::vector<SymbolSet>& terminals = grammar_.terminals;
  if (terminals_indexed_ != terminals.size()) {
    terminal_ids_.clear();
    for (size_t i = 0; i < terminals.size(); ++i)
      terminal_ids_.try_emplace(terminals[i], static_cast<int32_t>(i));
  }
  auto [it, inserted] = terminal_ids_.try_emplace(symbols, static_cast<int32_t>(terminals.size()));
  if (inserted) terminals.push_back(symbols);
  terminals_indexed_ = terminals.size();
  return {GrammarElement::Kind::kTerminal, it->second};
}

GrammarElement GrammarBuilder::byte(uint8_t value) { return byte_range(value, value); }

GrammarElement GrammarBuilder::byte_range(uint8_t first, uint8_t last) {
  SymbolSet set;
  for (int b = first; b <= last; ++b) set.set(b);
  return terminal(set);
}

GrammarElement GrammarBuilder::marker(std::string_view token_text) {
  std::vector<std::string>& markers = grammar_.markers;
  int marker = 0;
  while (marker < static_cast<int>(markers.size()) && markers[marker] != token_text) ++marker;
  if (marker == static_cast<int>(markers.size())) {
    if (marker == kMaxGrammarMarkers)
      fail("grammar: more than {} marker tokens", kMaxGrammarMarkers);
    markers.emplace_back(token_text);
  }
  SymbolSet set;
  set.set(marker_symbol(marker));
  return terminal(set);
}

ElementSequence GrammarBuilder::literal(std::string_view text) {
  ElementSequence sequence;
  for (char c : text) sequence.push_back(byte(static_cast<uint8_t>(c)));
  return sequence;
}

int32_t GrammarBuilder::choice(std::string_view name, std::vector<ElementSequence> alternatives) {
  const int32_t rule = new_rule(name);
  for (ElementSequence& a : alternatives) add_alternative(rule, std::move(a));
  return rule;
}

int32_t GrammarBuilder::optional(std::string_view name, ElementSequence element) {
  return choice(name, {std::move(element), {}});
}

int32_t GrammarBuilder::star(std::string_view name, ElementSequence element) {
  const int32_t rule = new_rule(name);
  element.push_back(ref(rule));  // right recursion: the matcher's stack does not grow
  add_alternative(rule, std::move(element));
  add_alternative(rule, {});
  return rule;
}

int32_t GrammarBuilder::plus(std::string_view name, ElementSequence element) {
  const int32_t rest = star(name, element);
  element.push_back(ref(rest));
  return choice(name, {std::move(element)});
}

int32_t GrammarBuilder::repeat(std::string_view name, ElementSequence element, int min, int max) {
  if (min < 0 || (max >= 0 && max < min))
    fail("grammar: repeat {{{},{}}} of {} is empty", min, max, name);
  if (max == 0) return choice(name, {{}});
  if (max == 1) return min == 1 ? choice(name, {std::move(element)}) : optional(name, element);
  // One counted element: the matcher keeps the count, so nothing here grows with the bounds.
  const int32_t body = choice(name, {std::move(element)});
  grammar_.repeats.push_back({body, min, max});
  const GrammarElement counted{GrammarElement::Kind::kRepeat,
                               static_cast<int32_t>(grammar_.repeats.size() - 1)};
  return choice(name, {{counted}});
}

Grammar GrammarBuilder::build(int32_t root) {
  Grammar& g = grammar_;
  const size_t n = g.rules.size();
  if (root < 0 || static_cast<size_t>(root) >= n)
    fail("grammar: root rule {} does not exist", root);
  for (size_t r = 0; r < n; ++r)
    if (g.rules[r].empty()) fail("grammar: rule {} has no alternative", g.rule_names[r]);

  for (const Repetition& rep : g.repeats)
    if (rep.rule < 0 || static_cast<size_t>(rep.rule) >= n)
      fail("grammar: a repetition names rule {}, which does not exist", rep.rule);

  // Nullable rules (derive the empty string), by fixed point.
  std::vector<bool> nullable(n, false);
  auto element_nullable = [&](const GrammarElement& e) {
    switch (e.kind) {
      case GrammarElement::Kind::kTerminal:
        return false;
      case GrammarElement::Kind::kRule:
        return static_cast<bool>(nullable[e.index]);
      case GrammarElement::Kind::kRepeat:
        return g.repeats[e.index].min == 0 || nullable[g.repeats[e.index].rule];
    }
    return false;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < n; ++r) {
      if (nullable[r]) continue;
      for (const ElementSequence& alt : g.rules[r]) {
        bool all = true;
        for (const GrammarElement& e : alt) all = all && element_nullable(e);
        if (all) {
          nullable[r] = changed = true;
          break;
        }
      }
    }
  }
  // Left edges: rule r can start with rule s without consuming a symbol (a counted element
  // starts with its rule). A cycle among them is left recursion, on which a top-down expansion
  // never ends.
  std::vector<std::vector<int32_t>> left(n);
  for (size_t r = 0; r < n; ++r)
    for (const ElementSequence& alt : g.rules[r])
      for (const GrammarElement& e : alt) {
        if (e.kind == GrammarElement::Kind::kTerminal) break;
        left[r].push_back(e.kind == GrammarElement::Kind::kRule ? e.index
                                                                : g.repeats[e.index].rule);
        if (!element_nullable(e)) break;
      }
  std::vector<int> color(n, 0);  // 0 unseen, 1 on the path, 2 done
  std::vector<std::pair<int32_t, size_t>> path;
  for (size_t start = 0; start < n; ++start) {
    if (color[start]) continue;
    path.push_back({static_cast<int32_t>(start), 0});
    color[start] = 1;
    while (!path.empty()) {
      auto& [rule, next] = path.back();
      if (next == left[rule].size()) {
        color[rule] = 2;
        path.pop_back();
        continue;
      }
      const int32_t s = left[rule][next++];
      if (color[s] == 1) fail("grammar: rule {} is left-recursive", g.rule_names[s]);
      if (color[s] == 0) {
        color[s] = 1;
        path.push_back({s, 0});
      }
    }
  }
  g.root = root;
  Grammar built = std::move(g);
  grammar_ = Grammar{};
  terminal_ids_.clear();
  terminals_indexed_ = 0;
  return built;
}

}  // namespace minimax
