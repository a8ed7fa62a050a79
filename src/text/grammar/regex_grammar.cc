// The regular-expression subset as a grammar (text/grammar/regex_grammar.h): a recursive-descent
// parser that emits rules as it reads.
#include "text/grammar/regex_grammar.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "base/error.h"

namespace minimax {
namespace {

constexpr int kMaxRepeat = 1000;
// Groups nest no deeper than this: the parser recurses once per level, and a request's pattern
// must not be able to exhaust a server thread's stack.
constexpr int kMaxGroupNesting = 64;
// The product of the bounds of repetitions nested inside each other, e.g. 100 for
// (a{0,10}){0,10}. Every count the nest can be at is a separate automaton stack, so the
// product bounds how many stacks one state can hold: ((.{0,100}){0,100}){0,100} is 10^6.
constexpr int64_t kMaxRepeatProduct = 10000;

CharClass ascii_class(std::string_view members) {
  CharClass set;
  for (char c : members) set.ascii.set(static_cast<uint8_t>(c));
  return set;
}

CharClass digits() {
  CharClass set;
  for (int c = '0'; c <= '9'; ++c) set.ascii.set(c);
  return set;
}

CharClass word() {
  CharClass set = digits();
  for (int c = 'a'; c <= 'z'; ++c) set.ascii.set(c);
  for (int c = 'A'; c <= 'Z'; ++c) set.ascii.set(c);
  set.ascii.set('_');
  return set;
}

CharClass space() { return ascii_class(" \t\n\r\f\v"); }

CharClass complement(const CharClass& set) {
  CharClass out;
  out.ascii = ~set.ascii;
  out.any_non_ascii = true;
  return out;
}

// A parsed piece of the pattern, and the largest product of nested repetition bounds inside it.
struct Parsed {
  ElementSequence elements;
  int64_t repeats = 1;
};

class RegexCompiler {
 public:
  RegexCompiler(GrammarBuilder& b, std::string_view pattern, const TextEncoding& encoding)
      : b_(b), p_(pattern), encoding_(encoding) {}

  int32_t compile() {
    const bool anchored_start = !p_.empty() && p_[0] == '^';
    if (anchored_start) ++pos_;
    ElementSequence body = alternation().elements;
    bool anchored_end = false;
    if (pos_ < p_.size() && p_[pos_] == '$' && pos_ + 1 == p_.size()) {
      anchored_end = true;
      ++pos_;
    }
    if (pos_ != p_.size()) error("unexpected '{}'", p_[pos_]);
    ElementSequence whole;
    if (!anchored_start) whole.push_back(any_text());
    whole = concat(std::move(whole), body);
    if (!anchored_end) whole.push_back(any_text());
    return b_.choice("pattern", {std::move(whole)});
  }

 private:
  template <typename... Args>
  [[noreturn]] void error(fmt::format_string<Args...> format, Args&&... args) {
    fail("pattern at offset {}: {}", pos_, fmt::format(format, std::forward<Args>(args)...));
  }

  bool at(char c) const { return pos_ < p_.size() && p_[pos_] == c; }

  GrammarElement any_text() {
    if (!any_text_) any_text_ = b_.star("any", {GrammarBuilder::ref(class_rule(CharClass::any()))});
    return GrammarBuilder::ref(*any_text_);
  }

  int32_t class_rule(const CharClass& set) {
    try {
      return char_class_rule(b_, set, encoding_);
    } catch (const Error& e) {
      error("{}", e.what());
    }
  }

  Parsed alternation() {
    Parsed first = sequence();
    if (!at('|')) return first;
    std::vector<ElementSequence> alternatives{std::move(first.elements)};
    int64_t repeats = first.repeats;
    while (at('|')) {
      ++pos_;
      Parsed next = sequence();
      alternatives.push_back(std::move(next.elements));
      repeats = std::max(repeats, next.repeats);
    }
    return {{GrammarBuilder::ref(b_.choice("alt", std::move(alternatives)))}, repeats};
  }

  Parsed sequence() {
    Parsed out;
    while (pos_ < p_.size() && !at('|') && !at(')')) {
      if (at('$') && pos_ + 1 == p_.size()) break;  // the end anchor, handled by compile()
      Parsed piece = quantified(atom());
      out.elements = concat(std::move(out.elements), piece.elements);
      out.repeats = std::max(out.repeats, piece.repeats);
    }
    return out;
  }

  Parsed quantified(Parsed atom) {
    int min = 1, max = 1;
    if (at('*')) {
      min = 0, max = -1, ++pos_;
    } else if (at('+')) {
      min = 1, max = -1, ++pos_;
    } else if (at('?')) {
      min = 0, max = 1, ++pos_;
    } else if (at('{') && pos_ + 1 < p_.size() &&
               std::isdigit(static_cast<uint8_t>(p_[pos_ + 1]))) {
      ++pos_;
      min = max = number();
      if (at(',')) {
        ++pos_;
        max = at('}') ? -1 : number();
      }
      if (!at('}')) error("expected '}}' to close a repetition");
      ++pos_;
      if (max >= 0 && max < min) error("repetition {{{},{}}} has max below min", min, max);
    } else {
      return atom;
    }
    if (at('?')) ++pos_;  // lazy: the same set of strings
    if (at('*') || at('+') || at('?') || at('{')) error("a quantifier cannot follow a quantifier");
    // An unbounded count is carried only up to min (grammar_automaton.h).
    const int64_t bound = std::max<int64_t>(max >= 0 ? max : min, 1);
    const int64_t repeats = atom.repeats * bound;
    if (repeats > kMaxRepeatProduct)
      error("nested repetitions multiply to {} iterations; the limit is {}", repeats,
            kMaxRepeatProduct);
    return {{GrammarBuilder::ref(b_.repeat("rep", std::move(atom.elements), min, max))}, repeats};
  }

  int number() {
    int value = 0;
    // "x{2," may end the pattern: a bound must not be read past it.
    if (pos_ == p_.size() || !std::isdigit(static_cast<uint8_t>(p_[pos_])))
      error("expected a number");
    while (pos_ < p_.size() && std::isdigit(static_cast<uint8_t>(p_[pos_]))) {
      value = value * 10 + (p_[pos_++] - '0');
      if (value > kMaxRepeat) error("repetition bounds above {} are not supported", kMaxRepeat);
    }
    return value;
  }

  Parsed atom() {
    const char c = p_[pos_];
    if (c == '(') {
      if (depth_ == kMaxGroupNesting)
        error("groups nested deeper than {} levels are not supported", kMaxGroupNesting);
      ++pos_;
      if (at('?')) {
        if (pos_ + 1 < p_.size() && p_[pos_ + 1] == ':') {
          pos_ += 2;
        } else {
          error("lookaround and named groups are not supported");
        }
      }
      ++depth_;
      Parsed inner = alternation();
      --depth_;
      if (!at(')')) error("missing ')'");
      ++pos_;
      return {{GrammarBuilder::ref(b_.choice("group", {std::move(inner.elements)}))},
              inner.repeats};
    }
    if (c == '[') return {{GrammarBuilder::ref(class_rule(bracket_class()))}};
    if (c == '.') {
      ++pos_;
      CharClass set = CharClass::any();
      set.ascii.reset('\n');
      set.ascii.reset('\r');
      return {{GrammarBuilder::ref(class_rule(set))}};
    }
    if (c == '\\') return {{GrammarBuilder::ref(class_rule(escape(false)))}};
    if (c == '^' || c == '$') error("anchors are supported only at the start and the end");
    if (c == '*' || c == '+' || c == '?' || c == '{' || c == ')')
      error("'{}' has nothing to repeat or close", c);
    return {{GrammarBuilder::ref(class_rule(single(next_char())))}};
  }

  // One UTF-8 character of the pattern as a code point.
  uint32_t next_char() {
    const auto lead = static_cast<uint8_t>(p_[pos_]);
    const size_t length = lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
    if (pos_ + length > p_.size()) error("truncated UTF-8 character");
    uint32_t cp = length == 1 ? lead : lead & (0xff >> (length + 1));
    for (size_t i = 1; i < length; ++i)
      cp = (cp << 6) | (static_cast<uint8_t>(p_[pos_ + i]) & 0x3f);
    pos_ += length;
    return cp;
  }

  static CharClass single(uint32_t cp) {
    CharClass set;
    if (cp < 0x80) {
      set.ascii.set(cp);
    } else {
      std::string utf8;
      append_utf8(utf8, cp);
      set.others.push_back(utf8);
    }
    return set;
  }

  // After a backslash. Inside a class \b would be a backspace; it is refused everywhere.
  CharClass escape(bool in_class) {
    ++pos_;
    if (pos_ >= p_.size()) error("a pattern cannot end with '\\'");
    const char c = p_[pos_++];
    switch (c) {
      case 'd':
        return digits();
      case 'D':
        return complement(digits());
      case 'w':
        return word();
      case 'W':
        return complement(word());
      case 's':
        return space();
      case 'S':
        return complement(space());
      case 'n':
        return single('\n');
      case 't':
        return single('\t');
      case 'r':
        return single('\r');
      case 'f':
        return single('\f');
      case 'v':
        return single('\v');
      case 'u': {
        if (pos_ + 4 > p_.size()) error("\\u needs four hex digits");
        uint32_t cp = 0;
        for (int i = 0; i < 4; ++i) {
          const char h = p_[pos_++];
          if (!std::isxdigit(static_cast<uint8_t>(h))) error("\\u needs four hex digits");
          cp = cp * 16 + (std::isdigit(static_cast<uint8_t>(h)) ? h - '0' : (h | 0x20) - 'a' + 10);
        }
        if (cp >= 0xd800 && cp < 0xe000) error("surrogate escapes are not supported");
        return single(cp);
      }
      default:
        if (std::isalnum(static_cast<uint8_t>(c)))
          error("escape \\{} is not supported", c);  // \b \B \1 \p{...} ...
        return single(static_cast<uint8_t>(c));      // escaped punctuation
    }
  }

  CharClass bracket_class() {
    ++pos_;  // '['
    const bool negated = at('^');
    if (negated) ++pos_;
    CharClass set;
    bool first = true;
    while (!at(']') || first) {
      if (pos_ >= p_.size()) error("missing ']'");
      first = false;
      CharClass item;
      uint32_t low = 0;
      bool is_char = true;
      if (at('\\')) {
        item = escape(true);
        is_char = item.ascii.count() + item.others.size() == 1 && !item.any_non_ascii;
        if (is_char) low = item.ascii.any() ? first_ascii(item) : 0x80;
      } else {
        low = next_char();
        item = single(low);
      }
      if (is_char && at('-') && pos_ + 1 < p_.size() && p_[pos_ + 1] != ']') {
        ++pos_;
        uint32_t high = 0;
        if (at('\\')) {
          CharClass h = escape(true);
          if (h.ascii.count() != 1) error("a range must end at one character");
          high = first_ascii(h);
        } else {
          high = next_char();
        }
        if (low >= 0x80 || high >= 0x80)
          error("ranges over non-ASCII characters are not supported");
        if (high < low) error("range out of order");
        for (uint32_t x = low; x <= high; ++x) item.ascii.set(x);
      }
      set.ascii |= item.ascii;
      set.any_non_ascii = set.any_non_ascii || item.any_non_ascii;
      set.others.insert(set.others.end(), item.others.begin(), item.others.end());
    }
    ++pos_;  // ']'
    if (!negated) return set;
    if (!set.others.empty()) error("a negated class may list ASCII characters only");
    if (set.any_non_ascii) error("a negated class cannot hold \\D, \\W or \\S");
    return complement(set);
  }

  static uint32_t first_ascii(const CharClass& set) {
    for (uint32_t c = 0; c < 128; ++c)
      if (set.ascii[c]) return c;
    return 0;
  }

  GrammarBuilder& b_;
  std::string_view p_;
  TextEncoding encoding_;
  size_t pos_ = 0;
  int depth_ = 0;  // groups open at pos_
  std::optional<int32_t> any_text_;
};

}  // namespace

int32_t regex_rule(GrammarBuilder& builder, std::string_view pattern,
                   const TextEncoding& encoding) {
  return RegexCompiler(builder, pattern, encoding).compile();
}

}  // namespace minimax
