// Sets of Unicode characters as grammar rules, in the two ways constrained output writes text:
// inside a JSON string (quote, backslash and control characters escaped) or raw (the text of a
// MiniMax XML tool-call value, where some bytes must never appear). Used by the regex subset
// (text/grammar/regex_grammar.h) and by the JSON-schema compiler for plain strings.
#pragma once

#include <bitset>
#include <string>
#include <vector>

#include "text/grammar/grammar.h"

namespace minimax {

struct CharClass {
  std::bitset<128> ascii;           // ASCII characters in the set
  bool any_non_ascii = false;       // every non-ASCII character (valid UTF-8, no surrogates)
  std::vector<std::string> others;  // specific non-ASCII characters, UTF-8 encoded

  static CharClass any();  // every character
};

struct TextEncoding {
  bool json_escape = true;  // write as JSON string content
  // Raw mode: ASCII bytes that must not appear (e.g. '<' in an M2 parameter value).
  std::bitset<128> forbidden;
};

// A rule matching one character of `set`, written as `encoding` says. In JSON mode '"' and '\'
// become \" and \\, newline, tab and carriage return \n \t \r, and the other control characters
// are left out (a JSON string cannot hold them raw; a grammar that needs them is rare). With
// `all_json_escapes`, the other escapes JSON allows (\/ \b \f \uXXXX) are accepted too, for
// strings with no pattern (\uXXXX without surrogate halves). Error when the set is empty once
// encoded.
int32_t char_class_rule(GrammarBuilder& builder, const CharClass& set, const TextEncoding& encoding,
                        bool all_json_escapes = false);

// Appends the UTF-8 encoding of `code_point` to `out`.
void append_utf8(std::string& out, uint32_t code_point);

}  // namespace minimax
