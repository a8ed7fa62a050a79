// A cursor over the lexer's tokens with the checks the parsers share; errors point at the token.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/jinja/lexer.h"

namespace minimax::jinja {

class TokenStream {
 public:
  TokenStream(std::vector<Token> tokens, std::string_view template_name)
      : tokens_(std::move(tokens)), template_name_(template_name) {}

  const Token& peek(size_t ahead = 0) const {
    return tokens_[std::min(index_ + ahead, tokens_.size() - 1)];
  }
  const Token& next() {
    const Token& token = tokens_[index_];
    if (index_ + 1 < tokens_.size()) ++index_;
    return token;
  }
  bool at(TokenKind kind) const { return peek().kind == kind; }
  bool at_op(std::string_view op, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::kOperator && peek(ahead).text == op;
  }
  bool at_name(std::string_view name, size_t ahead = 0) const {
    return peek(ahead).kind == TokenKind::kName && peek(ahead).text == name;
  }

  const Token& expect(TokenKind kind, std::string_view what) {
    if (!at(kind)) fail_here(fmt::format("expected {}, got {}", what, describe(peek())));
    return next();
  }
  void expect_op(std::string_view op) {
    if (!at_op(op)) fail_here(fmt::format("expected '{}', got {}", op, describe(peek())));
    next();
  }
  std::string expect_name(std::string_view what) { return expect(TokenKind::kName, what).text; }

  [[noreturn]] void fail_here(std::string_view message) const { fail_at(peek().pos, message); }
  [[noreturn]] void fail_at(SourcePos pos, std::string_view message) const {
    jinja::fail_at(template_name_, pos, message);
  }

  static std::string describe(const Token& token) {
    switch (token.kind) {
      case TokenKind::kText:
        return "template text";
      case TokenKind::kOutputBegin:
        return "'{{'";
      case TokenKind::kOutputEnd:
        return "end of print statement '}}'";
      case TokenKind::kBlockBegin:
        return "'{%'";
      case TokenKind::kBlockEnd:
        return "end of statement block '%}'";
      case TokenKind::kName:
        return "'" + token.text + "'";
      case TokenKind::kString:
        return "a string";
      case TokenKind::kInteger:
      case TokenKind::kFloat:
        return "number " + token.text;
      case TokenKind::kOperator:
        return "'" + token.text + "'";
      case TokenKind::kEnd:
        return "end of template";
    }
    return "?";
  }

 private:
  std::vector<Token> tokens_;
  size_t index_ = 0;
  std::string_view template_name_;
};

}  // namespace minimax::jinja
