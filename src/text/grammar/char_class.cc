// Character sets as grammar rules (text/grammar/char_class.h).
#include "text/grammar/char_class.h"

#include "base/error.h"

namespace minimax {

CharClass CharClass::any() {
  CharClass set;
  set.ascii.set();
  set.any_non_ascii = true;
  return set;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

int32_t char_class_rule(GrammarBuilder& b, const CharClass& set, const TextEncoding& encoding,
                        bool all_json_escapes) {
  std::vector<ElementSequence> alternatives;
  SymbolSet plain;
  for (int c = 0; c < 128; ++c) {
    if (!set.ascii[c]) continue;
    if (!encoding.json_escape) {
      if (!encoding.forbidden[c]) plain.set(c);
    } else if (c == '"' || c == '\\') {
      alternatives.push_back(b.literal(std::string("\\") + static_cast<char>(c)));
    } else if (c == '\n' || c == '\t' || c == '\r') {
      alternatives.push_back(b.literal(c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r"));
    } else if (c >= 0x20) {
      plain.set(c);
    }
  }
  if (plain.any()) alternatives.push_back({b.terminal(plain)});
  if (encoding.json_escape && all_json_escapes) {
    alternatives.push_back(b.literal("\\/"));
    alternatives.push_back(b.literal("\\b"));
    alternatives.push_back(b.literal("\\f"));
    auto set_of = [&](const char* chars) {
      SymbolSet h;
      for (const char* c = chars; *c; ++c) h.set(static_cast<uint8_t>(*c));
      return b.terminal(h);
    };
    const GrammarElement hex = set_of("0123456789abcdefABCDEF");
    // No surrogate halves (\uD800-\uDFFF): alone they are not characters, and parsers refuse them.
    alternatives.push_back(
        {b.byte('\\'), b.byte('u'), set_of("0123456789abcefABCEF"), hex, hex, hex});
    alternatives.push_back({b.byte('\\'), b.byte('u'), set_of("dD"), set_of("01234567"), hex, hex});
  }
  if (set.any_non_ascii) {
    // Well-formed UTF-8 only (RFC 3629 table 3-7): no overlong forms, no surrogates.
    const GrammarElement tail = b.byte_range(0x80, 0xbf);
    alternatives.push_back({b.byte_range(0xc2, 0xdf), tail});
    alternatives.push_back({b.byte(0xe0), b.byte_range(0xa0, 0xbf), tail});
    alternatives.push_back({b.byte_range(0xe1, 0xec), tail, tail});
    alternatives.push_back({b.byte(0xed), b.byte_range(0x80, 0x9f), tail});
    alternatives.push_back({b.byte_range(0xee, 0xef), tail, tail});
    alternatives.push_back({b.byte(0xf0), b.byte_range(0x90, 0xbf), tail, tail});
    alternatives.push_back({b.byte_range(0xf1, 0xf3), tail, tail, tail});
    alternatives.push_back({b.byte(0xf4), b.byte_range(0x80, 0x8f), tail, tail});
  } else {
    for (const std::string& c : set.others) alternatives.push_back(b.literal(c));
  }
  if (alternatives.empty()) fail("the character set is empty");
  return b.choice("char", std::move(alternatives));
}

}  // namespace minimax
