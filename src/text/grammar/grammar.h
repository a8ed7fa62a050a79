// A context-free grammar over bytes and a few marker symbols, the input of constrained decoding
// (text/grammar/grammar_matcher.h). Terminals are sets of symbols: the 256 byte values, and
// kMaxGrammarMarkers extra symbols that stand for special tokens the grammar names as a whole (the
// MiniMax tool-call markers are single tokens, not text). Rules are alternatives of element
// sequences; unbounded repetition is written as right recursion, which the matcher runs without
// growing its stack, and bounded repetition (element{min,max}) as one counted element, whose
// iteration count the matcher carries in its stack, so that a bound of 4096 costs no more grammar
// than a bound of 2. GrammarBuilder checks that no rule can reach itself without consuming a
// symbol (left recursion), the one shape a top-down matcher cannot run.
#pragma once

#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace minimax {

inline constexpr int kMaxGrammarMarkers = 8;
// The most rules one grammar may have: it bounds the memory and compile time a request's schema or
// pattern can cost (GrammarBuilder::new_rule throws past it; docs/api.md "Limits").
inline constexpr size_t kMaxGrammarRules = 100000;
inline constexpr int kSymbolCount = 256 + kMaxGrammarMarkers;  // bytes, then markers
inline constexpr int marker_symbol(int marker) { return 256 + marker; }

using SymbolSet = std::bitset<kSymbolCount>;

struct GrammarElement {
  enum class Kind : uint8_t { kTerminal, kRule, kRepeat };
  Kind kind = Kind::kTerminal;
  int32_t index = 0;  // into Grammar::terminals, Grammar::rules or Grammar::repeats
};
using ElementSequence = std::vector<GrammarElement>;

// `rule` matched between min and max times in a row (max < 0: no upper bound).
struct Repetition {
  int32_t rule = 0;
  int32_t min = 0;
  int32_t max = -1;
};

struct Grammar {
  std::vector<SymbolSet> terminals;
  // The special token each marker symbol stands for, by its text (e.g. "<minimax:tool_call>").
  std::vector<std::string> markers;
  std::vector<std::vector<ElementSequence>> rules;  // rule → alternatives
  std::vector<Repetition> repeats;                  // the counted elements
  std::vector<std::string> rule_names;              // for messages and dumps
  int32_t root = 0;

  // The grammar in a GBNF-like notation, for tests and debugging.
  std::string to_string() const;
};

// Builds a Grammar. Rules are declared (new_rule) and then given alternatives, so rules can refer
// to each other in any order; the helpers below declare and fill a rule in one call.
class GrammarBuilder {
 public:
  int32_t new_rule(std::string_view name);
  void add_alternative(int32_t rule, ElementSequence sequence);

  GrammarElement terminal(const SymbolSet& symbols);
  GrammarElement byte(uint8_t value);
  GrammarElement byte_range(uint8_t first, uint8_t last);
  // The marker symbol of the special token `token_text` (registered on first use).
  GrammarElement marker(std::string_view token_text);
  static GrammarElement ref(int32_t rule) { return {GrammarElement::Kind::kRule, rule}; }
  // The bytes of `text`, one terminal each.
  ElementSequence literal(std::string_view text);

  // A rule with the given alternatives.
  int32_t choice(std::string_view name, std::vector<ElementSequence> alternatives);
  // element? / element* / element+ / element{min,max} (max < 0: unbounded), each a new rule.
  // repeat() makes a counted element (Grammar::repeats) unless max <= 1.
  int32_t optional(std::string_view name, ElementSequence element);
  int32_t star(std::string_view name, ElementSequence element);
  int32_t plus(std::string_view name, ElementSequence element);
  int32_t repeat(std::string_view name, ElementSequence element, int min, int max);

  // Checks every rule has an alternative and no left recursion (Error naming the rule) and hands
  // the grammar over; the builder is empty afterwards.
  Grammar build(int32_t root);

 private:
  friend Grammar after_free_text(Grammar, std::string_view, const std::vector<std::string>&);
  const SymbolSet& terminal_set(GrammarElement e) const { return grammar_.terminals.at(e.index); }
  Grammar grammar_;
  // Terminal index by set: terminals repeat a lot (digits, string characters), and a pattern can
  // name thousands of distinct classes. Rebuilt when it lags grammar_.terminals.
  std::unordered_map<SymbolSet, int32_t> terminal_ids_;
  size_t terminals_indexed_ = 0;
};

// `grammar` preceded by free text and the special token `end_marker`: any bytes, and the special
// tokens `free_markers`, then end_marker, then a sentence of `grammar`. For output that follows a
// grammar only after the reasoning (which ends at the end-of-reasoning marker) and must not end
// before it.
Grammar after_free_text(Grammar grammar, std::string_view end_marker,
                        const std::vector<std::string>& free_markers = {});

// Appends `b` to `a`.
ElementSequence concat(ElementSequence a, const ElementSequence& b);

}  // namespace minimax
