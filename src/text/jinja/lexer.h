// Splits a template into tokens the way jinja2's lexer does under transformers' settings
// (trim_blocks, lstrip_blocks, no trailing newline kept): text between tags, tag delimiters,
// and the names, literals and operators inside tags. Comments and whitespace control (`{%-`, `-%}`,
// `{%+`) are applied here, so the parser sees only the text that is really output.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/jinja/template_error.h"

namespace minimax::jinja {

enum class TokenKind {
  kText,         // literal template text
  kOutputBegin,  // {{
  kOutputEnd,    // }}
  kBlockBegin,   // {%
  kBlockEnd,     // %}
  kName,
  kString,  // text holds the decoded value
  kInteger,
  kFloat,
  kOperator,  // text holds the operator, e.g. "//" or "|"
  kEnd,       // end of template
};

struct Token {
  TokenKind kind;
  std::string text;
  int64_t integer = 0;
  double number = 0;
  SourcePos pos;
};

std::vector<Token> tokenize(std::string_view source, std::string_view template_name);

}  // namespace minimax::jinja
