// The template lexer: jinja2's root/tag states with trim_blocks and lstrip_blocks, Python string
// escapes and jinja2's number forms.
#include "text/jinja/lexer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "text/jinja/unicode.h"

namespace minimax::jinja {
namespace {

constexpr std::string_view kTwoCharOperators[] = {"//", "**", "==", "!=", ">=", "<="};
constexpr std::string_view kOneCharOperators = "+-/*%~[](){}><=.:|,;";

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// jinja2 treats \r\n, \r and \n alike and drops one trailing newline (keep_trailing_newline=False).
std::string normalize_newlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class Lexer {
 public:
  Lexer(std::string_view source, std::string_view name)
      : src_(normalize_newlines(source)), name_(name) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const size_t tag = find_tag(pos_);
      if (tag == std::string::npos) {
        emit_text(src_.substr(pos_));
        break;
      }
      const char kind = src_[tag + 1];
      const char modifier = tag + 2 < src_.size() && (src_[tag + 2] == '-' || src_[tag + 2] == '+')
                                ? src_[tag + 2]
                                : '\0';
      emit_text(strip_before_tag(src_.substr(pos_, tag - pos_), kind, modifier));
      const size_t inner = tag + 2 + (modifier != '\0' ? 1 : 0);
      size_t raw_close = 0;
      char raw_modifier = '\0';
      if (kind == '#') {
        lex_comment(tag, inner);
      } else if (kind == '%' && match_word_tag(inner, "raw", &raw_close, &raw_modifier) &&
                 raw_modifier != '+') {
        lex_raw(tag, raw_close, raw_modifier);
      } else {
        lex_tag(kind == '{', tag, inner);
      }
    }
    tokens_.push_back(Token{TokenKind::kEnd, "", 0, 0, position(src_.size())});
    return std::move(tokens_);
  }

 private:
  // Line and column of a source offset. Tokens come in source order, so walking on from the
  // previous answer keeps this linear even on a template that is one long line.
  SourcePos position(size_t offset) const {
    if (offset < cached_offset_) {
      const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
      cached_offset_ = *(it - 1);
      cached_pos_ = SourcePos{static_cast<int>(it - line_starts_.begin()), 1};
    }
    for (; cached_offset_ < offset && cached_offset_ < src_.size(); ++cached_offset_) {
      const char c = src_[cached_offset_];
      if (c == '\n') {
        ++cached_pos_.line;
        cached_pos_.column = 1;
      } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
        ++cached_pos_.column;
      }
    }
    return cached_pos_;
  }

  [[noreturn]] void error(size_t offset, const std::string& message) const {
    fail_at(name_, position(offset), message);
  }

  size_t find_tag(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) {
        return i;
      }
    }
    return std::string::npos;
  }

  // `{%-` strips all whitespace before the tag; otherwise lstrip_blocks removes the spaces that
  // open the tag's line (block and comment tags only, and never with `{%+`).
  std::string strip_before_tag(std::string text, char kind, char modifier) const {
    if (modifier == '-') return strip_python(text, nullptr, false, true);
    if (modifier == '+' || kind == '{') return text;
    const size_t line_begin = text.rfind('\n') + 1;  // npos + 1 == 0
    if (line_begin == 0 && !line_starting_) return text;
    const std::string_view rest = std::string_view(text).substr(line_begin);
    if (rest.empty()) return text;
    for (char32_t c : decode_utf8(rest)) {
      if (!is_python_space(c)) return text;
    }
    text.resize(line_begin);
    return text;
  }

  void emit_text(std::string text) {
    if (!text.empty())
      tokens_.push_back(Token{TokenKind::kText, std::move(text), 0, 0, position(pos_)});
  }

  size_t skip_python_space(size_t at) const {
    while (at < src_.size()) {
      const size_t next = src_.find_first_not_of(" \t\n\r\f\v", at);
      if (next != at) {
        at = next == std::string::npos ? src_.size() : next;
        continue;
      }
      const std::vector<char32_t> one = decode_utf8(std::string_view(src_).substr(at, 4));
      if (one.empty() || one[0] < 0x80 || !is_python_space(one[0])) break;
      std::string encoded;
      append_utf8(encoded, one[0]);
      at += encoded.size();
    }
    return at;
  }

  // After a block or comment end: `-%}` eats following whitespace, `+%}` nothing, and plain `%}`
  // one newline (trim_blocks). Returns the offset after what was consumed.
  size_t consume_block_end(size_t end_of_delimiter, char modifier) {
    size_t at = end_of_delimiter;
    if (modifier == '-') {
      at = skip_python_space(at);
    } else if (modifier != '+' && at < src_.size() && src_[at] == '\n') {
      ++at;
    }
    line_starting_ = at > 0 && src_[at - 1] == '\n';
    return at;
  }

  void lex_comment(size_t tag, size_t inner) {
    const size_t close = src_.find("#}", inner);
    if (close == std::string::npos) error(tag, "missing end of comment tag");
    const char modifier = close > inner && (src_[close - 1] == '-' || src_[close - 1] == '+')
                              ? src_[close - 1]
                              : '\0';
    pos_ = consume_block_end(close + 2, modifier);
  }

  // Matches `\s*WORD\s*(-|+)?%}` at `at` (after `{%` and its modifier): sets *close to the
  // offset of the `%}` and *modifier to the sign before it.
  bool match_word_tag(size_t at, std::string_view word, size_t* close, char* modifier) const {
    at = skip_python_space(at);
    if (src_.compare(at, word.size(), word) != 0) return false;
    at += word.size();
    if (at < src_.size() && is_name_char(src_[at])) return false;
    at = skip_python_space(at);
    *modifier = '\0';
    if (at < src_.size() && (src_[at] == '-' || src_[at] == '+')) *modifier = src_[at++];
    if (src_.compare(at, 2, "%}") != 0) return false;
    *close = at;
    return true;
  }

  // {% raw %}...{% endraw %}: the body is text. jinja2 applies trim_blocks after endraw only.
  void lex_raw(size_t tag, size_t close, char modifier) {
    const size_t body = modifier == '-' ? skip_python_space(close + 2) : close + 2;
    line_starting_ = body > 0 && src_[body - 1] == '\n';
    for (size_t end = src_.find("{%", body); end != std::string::npos;
         end = src_.find("{%", end + 2)) {
      const char open = end + 2 < src_.size() && (src_[end + 2] == '-' || src_[end + 2] == '+')
                            ? src_[end + 2]
                            : '\0';
      size_t end_close = 0;
      char end_modifier = '\0';
      if (!match_word_tag(end + 2 + (open != '\0' ? 1 : 0), "endraw", &end_close, &end_modifier)) {
        continue;
      }
      pos_ = body;
      emit_text(strip_before_tag(src_.substr(body, end - body), '%', open));
      pos_ = consume_block_end(end_close + 2, end_modifier);
      return;
    }
    error(tag, "missing end of raw directive ({% endraw %})");
  }

  void lex_tag(bool is_output, size_t tag, size_t inner) {
    tokens_.push_back(Token{is_output ? TokenKind::kOutputBegin : TokenKind::kBlockBegin,
                            is_output ? "{{" : "{%", 0, 0, position(tag)});
    std::vector<char> brackets;
    size_t at = inner;
    while (true) {
      if (at >= src_.size()) {
        error(tag, fmt::format("unexpected end of template inside this tag, expected '{}'",
                               is_output ? "}}" : "%}"));
      }
      if (brackets.empty()) {
        const std::string_view close = is_output ? "}}" : "%}";
        char modifier = '\0';
        size_t delimiter = at;
        if ((src_[at] == '-' || (!is_output && src_[at] == '+')) &&
            src_.compare(at + 1, 2, close) == 0) {
          modifier = src_[at];
          delimiter = at + 1;
        }
        if (src_.compare(delimiter, 2, close) == 0) {
          tokens_.push_back(Token{is_output ? TokenKind::kOutputEnd : TokenKind::kBlockEnd,
                                  std::string(close), 0, 0, position(at)});
          if (is_output) {  // trim_blocks does not apply to }}
            pos_ = modifier == '-' ? skip_python_space(delimiter + 2) : delimiter + 2;
            line_starting_ = pos_ > 0 && src_[pos_ - 1] == '\n';
          } else {
            pos_ = consume_block_end(delimiter + 2, modifier);
          }
          return;
        }
      }
      at = lex_one(at, brackets);
    }
  }

  // Lexes one token inside a tag starting at `at`; returns the offset after it.
  size_t lex_one(size_t at, std::vector<char>& brackets) {
    const char c = src_[at];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') return at + 1;
    if (is_digit(c)) return lex_number(at);
    if (is_name_start(c)) {
      size_t end = at;
      while (end < src_.size() && is_name_char(src_[end])) ++end;
      tokens_.push_back(Token{TokenKind::kName, src_.substr(at, end - at), 0, 0, position(at)});
      return end;
    }
    if (c == '\'' || c == '"') return lex_string(at);
    std::string op;
    for (std::string_view two : kTwoCharOperators) {
      if (src_.compare(at, 2, two) == 0) op = two;
    }
    if (op.empty() && kOneCharOperators.find(c) != std::string_view::npos) op = std::string(1, c);
    if (op.empty()) {
      const std::vector<char32_t> cp = decode_utf8(std::string_view(src_).substr(at, 4));
      std::string shown;
      append_utf8(shown, cp.empty() ? U'?' : cp[0]);
      error(at, fmt::format("unexpected character '{}'", shown));
    }
    if (op == "(" || op == "[" || op == "{") {
      brackets.push_back(op == "(" ? ')' : op == "[" ? ']' : '}');
    } else if (op == ")" || op == "]" || op == "}") {
      if (brackets.empty()) error(at, fmt::format("unexpected '{}'", op));
      if (brackets.back() != op[0]) {
        error(at, fmt::format("unexpected '{}', expected '{}'", op, brackets.back()));
      }
      brackets.pop_back();
    }
    tokens_.push_back(Token{TokenKind::kOperator, op, 0, 0, position(at)});
    return at + op.size();
  }

  // Digits with optional single underscores between them (jinja2's `(\d+_)*\d+`).
  size_t scan_digits(size_t at) const {
    size_t end = at;
    while (end < src_.size() &&
           (is_digit(src_[end]) ||
            (src_[end] == '_' && end + 1 < src_.size() && is_digit(src_[end + 1]) && end > at))) {
      ++end;
    }
    return end;
  }

  size_t lex_number(size_t at) {
    size_t end = scan_digits(at);
    bool is_float = false;
    const bool after_dot = at > 0 && src_[at - 1] == '.';  // `x.0.1` is attribute access
    if (!after_dot && end + 1 < src_.size() && src_[end] == '.' && is_digit(src_[end + 1])) {
      end = scan_digits(end + 1);
      is_float = true;
    }
    if (!after_dot && end < src_.size() && (src_[end] == 'e' || src_[end] == 'E')) {
      size_t exponent = end + 1;
      if (exponent < src_.size() && (src_[exponent] == '+' || src_[exponent] == '-')) ++exponent;
      if (exponent < src_.size() && is_digit(src_[exponent])) {
        end = scan_digits(exponent);
        is_float = true;
      }
    }
    std::string digits = src_.substr(at, end - at);
    digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
    Token token{is_float ? TokenKind::kFloat : TokenKind::kInteger, digits, 0, 0, position(at)};
    if (is_float) {
      token.number = std::strtod(digits.c_str(), nullptr);
    } else {
      errno = 0;
      token.integer = std::strtoll(digits.c_str(), nullptr, 10);
      if (errno == ERANGE) error(at, fmt::format("integer literal {} is too large", digits));
    }
    tokens_.push_back(std::move(token));
    return end;
  }

  size_t lex_string(size_t at) {
    const char quote = src_[at];
    std::string value;
    size_t i = at + 1;
    while (true) {
      if (i >= src_.size()) error(at, "unterminated string literal");
      const char c = src_[i];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        ++i;
        continue;
      }
      if (i + 1 >= src_.size()) error(at, "unterminated string literal");
      i = decode_escape(i, value);
    }
    tokens_.push_back(Token{TokenKind::kString, std::move(value), 0, 0, position(at)});
    return i + 1;
  }

  // Python's unicode-escape decoding of one backslash sequence starting at `at`.
  size_t decode_escape(size_t at, std::string& value) const {
    const char e = src_[at + 1];
    switch (e) {
      case '\n':
        return at + 2;  // line continuation
      case '\\':
        value += '\\';
        return at + 2;
      case '\'':
        value += '\'';
        return at + 2;
      case '"':
        value += '"';
        return at + 2;
      case 'a':
        value += '\a';
        return at + 2;
      case 'b':
        value += '\b';
        return at + 2;
      case 'f':
        value += '\f';
        return at + 2;
      case 'n':
        value += '\n';
        return at + 2;
      case 'r':
        value += '\r';
        return at + 2;
      case 't':
        value += '\t';
        return at + 2;
      case 'v':
        value += '\v';
        return at + 2;
      default:
        break;
    }
    if (e >= '0' && e <= '7') {
      size_t end = at + 1;
      char32_t code = 0;
      while (end < src_.size() && end < at + 4 && src_[end] >= '0' && src_[end] <= '7') {
        code = code * 8 + static_cast<char32_t>(src_[end] - '0');
        ++end;
      }
      append_utf8(value, code);
      return end;
    }
    const size_t width = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
    if (width == 0) {  // unknown escapes stay as written
      value += '\\';
      return at + 1;
    }
    char32_t code = 0;
    for (size_t k = 0; k < width; ++k) {
      const size_t p = at + 2 + k;
      const char h = p < src_.size() ? src_[p] : '\0';
      const int digit = is_digit(h)              ? h - '0'
                        : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                        : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                                 : -1;
      if (digit < 0) error(at, fmt::format("truncated \\{} escape in string literal", e));
      code = code * 16 + static_cast<char32_t>(digit);
    }
    if (code > 0x10FFFF) error(at, "\\U escape out of the Unicode range");
    append_utf8(value, code);
    return at + 2 + width;
  }

  std::string src_;
  std::string_view name_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  bool line_starting_ = true;
  mutable size_t cached_offset_ = 0;
  mutable SourcePos cached_pos_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, std::string_view template_name) {
  return Lexer(source, template_name).run();
}

}  // namespace minimax::jinja
