// Statement parser: block tags and their bodies, with messages that name the unclosed block.
#include "text/jinja/parser.h"

#include <fmt/format.h>

#include <algorithm>

#include "text/jinja/expression_parser.h"
#include "text/jinja/lexer.h"
#include "text/jinja/token_stream.h"

namespace minimax::jinja {
namespace {

// Tags of full Jinja that chat templates do not use; named so the message says "unsupported"
// rather than "unknown".
constexpr std::string_view kUnsupportedTags[] = {
    "block", "extends", "include", "import", "from", "call", "filter", "with", "autoescape", "do"};

class StatementParser {
 public:
  StatementParser(std::string_view source, std::string_view name)
      : t_(tokenize(source, name), name) {}

  Body parse() { return body({}); }

 private:
  struct OpenBlock {
    std::string tag;
    SourcePos pos;
  };

  std::unique_ptr<Stmt> make(StmtKind kind, SourcePos pos) {
    auto stmt = std::make_unique<Stmt>();
    stmt->kind = kind;
    stmt->pos = pos;
    return stmt;
  }

  // Statements until one of end_tags opens a block tag; that tag's name is consumed and returned
  // in *found (the rest of the tag is the caller's).
  Body body(std::initializer_list<std::string_view> end_tags, std::string* found = nullptr) {
    Body out;
    while (true) {
      const Token& token = t_.peek();
      switch (token.kind) {
        case TokenKind::kText: {
          auto stmt = make(StmtKind::kText, token.pos);
          stmt->text = t_.next().text;
          out.push_back(std::move(stmt));
          break;
        }
        case TokenKind::kOutputBegin: {
          auto stmt = make(StmtKind::kOutput, t_.next().pos);
          stmt->expr = parse_tuple(t_);
          t_.expect(TokenKind::kOutputEnd, "end of print statement '}}'");
          out.push_back(std::move(stmt));
          break;
        }
        case TokenKind::kBlockBegin: {
          const Token& tag = t_.peek(1);
          if (tag.kind != TokenKind::kName) {
            t_.next();
            t_.fail_here(fmt::format("expected a tag name, got {}", TokenStream::describe(tag)));
          }
          if (std::find(end_tags.begin(), end_tags.end(), tag.text) != end_tags.end()) {
            t_.next();
            *found = t_.next().text;
            return out;
          }
          t_.next();
          statement(out, end_tags);
          break;
        }
        case TokenKind::kEnd:
          if (end_tags.size() == 0) return out;
          t_.fail_at(open_.back().pos,
                     fmt::format("unexpected end of template: {{% {} %}} is never closed "
                                 "(expected {})",
                                 open_.back().tag, expected(end_tags)));
        default:
          t_.fail_here(fmt::format("unexpected {}", TokenStream::describe(token)));
      }
    }
  }

  static std::string expected(std::initializer_list<std::string_view> end_tags) {
    std::string out;
    for (std::string_view tag : end_tags) {
      if (!out.empty()) out += " or ";
      out += fmt::format("{{% {} %}}", tag);
    }
    return out;
  }

  // Parses the block tag whose name is the current token, appending to out.
  void statement(Body& out, std::initializer_list<std::string_view> end_tags) {
    const Token& tag = t_.next();
    const std::string name = tag.text;
    if (name == "if") return out.push_back(if_statement(tag.pos));
    if (name == "for") return out.push_back(for_statement(tag.pos));
    if (name == "set") return out.push_back(set_statement(tag.pos));
    if (name == "macro") return out.push_back(macro_statement(tag.pos));
    if (name == "break" || name == "continue") {
      if (loop_depth_ == 0) t_.fail_at(tag.pos, fmt::format("'{}' outside of a for loop", name));
      end_of_tag();
      return out.push_back(make(name == "break" ? StmtKind::kBreak : StmtKind::kContinue, tag.pos));
    }
    if (name == "generation") {  // transformers' assistant-mask marker: render the body in place
      end_of_tag();
      Body inner = block_body(tag, {"endgeneration"});
      end_of_tag();
      for (auto& stmt : inner) out.push_back(std::move(stmt));
      return;
    }
    for (std::string_view unsupported : kUnsupportedTags) {
      if (name == unsupported) {
        t_.fail_at(tag.pos, fmt::format("the '{}' tag is not supported by this chat-template "
                                        "interpreter",
                                        name));
      }
    }
    if (end_tags.size() > 0) {
      t_.fail_at(tag.pos, fmt::format("unexpected tag '{}' (expected {} to close the {{% {} %}} "
                                      "at {}:{})",
                                      name, expected(end_tags), open_.back().tag,
                                      open_.back().pos.line, open_.back().pos.column));
    }
    t_.fail_at(tag.pos, fmt::format("unknown tag '{}'", name));
  }

  Body block_body(const Token& opener, std::initializer_list<std::string_view> end_tags,
                  std::string* found = nullptr) {
    std::string ignored;
    if (open_.size() >= kMaxNesting) t_.fail_at(opener.pos, "blocks nested too deeply");
    open_.push_back({opener.text, opener.pos});
    Body out = body(end_tags, found != nullptr ? found : &ignored);
    open_.pop_back();
    return out;
  }

  void end_of_tag() { t_.expect(TokenKind::kBlockEnd, "end of statement block '%}'"); }

  std::unique_ptr<Stmt> if_statement(SourcePos pos) {
    auto stmt = make(StmtKind::kIf, pos);
    const Token opener{TokenKind::kName, "if", 0, 0, pos};
    ExprPtr condition = parse_tuple(t_, false);
    while (true) {
      end_of_tag();
      std::string found;
      Body branch = block_body(opener, {"elif", "else", "endif"}, &found);
      stmt->branches.push_back(IfBranch{std::move(condition), std::move(branch)});
      if (found == "elif") {
        condition = parse_tuple(t_, false);
        continue;
      }
      if (found == "else") {
        end_of_tag();
        stmt->else_body = block_body(opener, {"endif"});
      }
      end_of_tag();
      return stmt;
    }
  }

  // Names separated by commas, optionally in parentheses: `x`, `k, v`, `(k, v)`.
  std::vector<std::string> target_names() {
    std::vector<std::string> names;
    const bool parenthesized = t_.at_op("(");
    if (parenthesized) t_.next();
    do {
      if (!names.empty()) t_.next();
      names.push_back(t_.expect_name("a variable name"));
    } while (t_.at_op(","));
    if (parenthesized) t_.expect_op(")");
    return names;
  }

  std::unique_ptr<Stmt> for_statement(SourcePos pos) {
    auto stmt = make(StmtKind::kFor, pos);
    const Token opener{TokenKind::kName, "for", 0, 0, pos};
    stmt->names = target_names();
    if (!t_.at_name("in")) t_.fail_here("expected 'in' in the for statement");
    t_.next();
    stmt->expr = parse_tuple(t_, false);
    if (t_.at_name("if")) {
      t_.next();
      stmt->condition = parse_expression(t_);
    }
    if (t_.at_name("recursive")) t_.fail_here("recursive for loops are not supported");
    end_of_tag();
    std::string found;
    ++loop_depth_;
    stmt->body = block_body(opener, {"else", "endfor"}, &found);
    --loop_depth_;
    if (found == "else") {
      end_of_tag();
      stmt->else_body = block_body(opener, {"endfor"});
    }
    end_of_tag();
    return stmt;
  }

  std::unique_ptr<Stmt> set_statement(SourcePos pos) {
    auto stmt = make(StmtKind::kSet, pos);
    if (t_.at(TokenKind::kName) && t_.at_op(".", 1)) {  // set ns.attribute = value
      auto object = std::make_unique<Expr>();
      object->kind = ExprKind::kName;
      object->pos = t_.peek().pos;
      object->name = t_.next().text;
      t_.next();
      stmt->target = std::move(object);
      stmt->attribute = t_.expect_name("an attribute name");
    } else {
      stmt->names = target_names();
    }
    if (t_.at_op("=")) {
      t_.next();
      stmt->expr = parse_tuple(t_);
      end_of_tag();
      return stmt;
    }
    if (stmt->target != nullptr || stmt->names.size() != 1) {
      t_.fail_here("a block set ({% set name %}...{% endset %}) takes one variable name");
    }
    stmt->kind = StmtKind::kSetBlock;
    while (t_.at_op("|")) stmt->filters.push_back(parse_filter(t_, nullptr));
    end_of_tag();
    stmt->body = block_body(Token{TokenKind::kName, "set", 0, 0, pos}, {"endset"});
    end_of_tag();
    return stmt;
  }

  std::unique_ptr<Stmt> macro_statement(SourcePos pos) {
    auto stmt = make(StmtKind::kMacro, pos);
    stmt->name = t_.expect_name("a macro name");
    t_.expect_op("(");
    while (!t_.at_op(")")) {
      if (!stmt->params.empty()) t_.expect_op(",");
      if (t_.at_op(")")) break;
      MacroParam param;
      param.name = t_.expect_name("a parameter name");
      if (t_.at_op("=")) {
        t_.next();
        param.default_value = parse_expression(t_);
      } else if (!stmt->params.empty() && stmt->params.back().default_value != nullptr) {
        t_.fail_here("non-default argument follows default argument");
      }
      stmt->params.push_back(std::move(param));
    }
    t_.expect_op(")");
    end_of_tag();
    const int saved_depth = loop_depth_;
    loop_depth_ = 0;  // a loop around the definition is not a loop around the body
    stmt->body = block_body(Token{TokenKind::kName, "macro", 0, 0, pos}, {"endmacro"});
    loop_depth_ = saved_depth;
    end_of_tag();
    return stmt;
  }

  static constexpr size_t kMaxNesting = 200;
  TokenStream t_;
  std::vector<OpenBlock> open_;
  int loop_depth_ = 0;
};

}  // namespace

Body parse_template(std::string_view source, std::string_view template_name) {
  return StatementParser(source, template_name).parse();
}

}  // namespace minimax::jinja
