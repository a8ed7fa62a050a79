// Shared by the grammar fuzz targets: runs a compiled grammar the way constrained decoding does,
// so that a fuzzed pattern, schema or tool list reaches the automaton and the token masks, not
// only the compiler. A GrammarMatcher over a small vocabulary (every byte, some multi-byte and
// UTF-8 tokens, the grammar's markers, an end token) takes tokens chosen by a generator seeded
// from the fuzz input; at each step its mask must equal a check of every token against a second
// automaton stepped byte by byte, which is what the mask's trie walk and class runs abbreviate.
// minimax::Error (a state past the automaton's stack limit) ends the walk: that is the refusal
// the server turns into an error; anything else, or a wrong mask, aborts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "text/grammar/grammar_matcher.h"

namespace minimax::fuzz {

// A deterministic generator for the walk (splitmix64), seeded from the input's bytes (FNV-1a).
class WalkChoices {
 public:
  explicit WalkChoices(std::string_view input) {
    for (unsigned char c : input) state_ = (state_ ^ c) * 0x100000001B3ull;
  }
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_ = 0xCBF29CE484222325ull;
};

// Tokens beyond the single bytes: pieces of JSON and of the tool-call formats, and whole UTF-8
// characters of two to four bytes, so that masks take multi-byte paths through the trie.
inline const char* const kWalkTokens[] = {
    "{\"",       "\":",     "\",\"",  "\"}",        "}}",         "[]",    "[{", "true",    "false",
    "null",      "12",      "-1",     ".5",         "e+9",        "abc",   "ab", "  ",      "\\n",
    "\\\"",      "\\u00e9", "é",      "中",         "😀",          "é\"",   "</", "name=\"", "\">",
    "parameter", "item",    "invoke", "2024-01-01", "T12:00:00Z", "-0000-"};

// The vocabulary for `grammar`: the walk tokens, then its markers and "<end>" as special tokens.
inline std::shared_ptr<const TokenTrie> walk_vocab(const Grammar& grammar, int32_t& end_token) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  for (const char* t : kWalkTokens) tokens.emplace_back(t);
  std::unordered_map<std::string, int32_t> special;
  for (const std::string& marker : grammar.markers) {
    special[marker] = static_cast<int32_t>(tokens.size());
    tokens.push_back(marker);
  }
  end_token = static_cast<int32_t>(tokens.size());
  special["<end>"] = end_token;
  tokens.push_back("<end>");
  return std::make_shared<const TokenTrie>(tokens, special);
}

// Whether `token` may follow `state` of `automaton`, decided byte by byte.
inline bool token_allowed(GrammarAutomaton& automaton, int32_t state, const TokenTrie& vocab,
                          const std::vector<int32_t>& marker_tokens, int32_t end_token,
                          int32_t token) {
  if (token == end_token) return automaton.accepting(state);
  for (size_t m = 0; m < marker_tokens.size(); ++m)
    if (marker_tokens[m] == token)
      return automaton.next(state, marker_symbol(static_cast<int>(m))) != GrammarAutomaton::kDead;
  for (char c : vocab.token_bytes(token)) {
    state = automaton.next(state, static_cast<uint8_t>(c));
    if (state == GrammarAutomaton::kDead) return false;
  }
  return !vocab.token_bytes(token).empty();
}

// multibyte_successor's promise: every character of two to four bytes leads to the state it names.
inline void check_multibyte(GrammarAutomaton& automaton, int32_t state) {
  const int32_t all = automaton.multibyte_successor(state);
  if (all == GrammarAutomaton::kMixed) return;
  for (std::string_view c : {"é", "中", "😀", "\xF4\x8F\xBF\xBF"}) {
    int32_t s = state;
    for (char byte : c)
      if (s != GrammarAutomaton::kDead) s = automaton.next(s, static_cast<uint8_t>(byte));
    if (s != all) std::abort();
  }
}

// Walks `grammar` for at most `steps` tokens chosen by `choices`, checking every mask.
inline void walk_grammar(std::shared_ptr<const Grammar> grammar, WalkChoices& choices, int steps) {
  int32_t end_token = 0;
  const std::shared_ptr<const TokenTrie> vocab = walk_vocab(*grammar, end_token);
  std::vector<int32_t> marker_tokens;
  for (const std::string& marker : grammar->markers)
    marker_tokens.push_back(*vocab->special_token(marker));
  try {
    GrammarMatcher matcher(grammar, vocab, {end_token});
    GrammarAutomaton oracle(grammar);
    int32_t state = oracle.start();
    std::vector<int32_t> allowed;
    for (int step = 0; step < steps && !matcher.finished(); ++step) {
      const TokenBitmask& mask = matcher.allowed_tokens();
      allowed.clear();
      for (int32_t t = 0; t < vocab->vocab_size(); ++t) {
        const bool ok = token_allowed(oracle, state, *vocab, marker_tokens, end_token, t);
        if (ok != bitmask_test(mask, t)) std::abort();  // the mask disagrees with the automaton
        if (ok) allowed.push_back(t);
      }
      if (matcher.accepting() != oracle.accepting(state)) std::abort();
      check_multibyte(oracle, state);
      if (allowed.empty()) return;
      // Half the steps pick among the longer tokens and markers when any fit, so that walks
      // close strings and structures instead of wandering through single bytes.
      const auto longer = std::lower_bound(allowed.begin(), allowed.end(), 256);
      const bool prefer_longer = longer != allowed.end() && choices.next() % 2 == 0;
      const auto first = prefer_longer ? longer : allowed.begin();
      const int32_t token = first[choices.next() % static_cast<size_t>(allowed.end() - first)];
      if (!matcher.accept_token(token)) std::abort();
      if (token == end_token) return;
      const auto marker = std::find(marker_tokens.begin(), marker_tokens.end(), token);
      if (marker != marker_tokens.end()) {
        state = oracle.next(state, marker_symbol(static_cast<int>(marker - marker_tokens.begin())));
      } else {
        for (char c : vocab->token_bytes(token))
          state = oracle.next(state, static_cast<uint8_t>(c));
      }
      // Forgetting the other states must leave this one working.
      if (step == steps / 2) state = oracle.reset_keeping(state);
    }
  } catch (const Error&) {
  }
}

}  // namespace minimax::fuzz
