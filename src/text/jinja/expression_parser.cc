// Recursive-descent expression parser following jinja2's parser.py precedence and quirks
// (left-associative **, tests taking one bare argument, filters binding to the unary operand).
#include "text/jinja/expression_parser.h"

#include <fmt/format.h>

#include "text/jinja/filters.h"
#include "text/jinja/predicates.h"

namespace minimax::jinja {
namespace {

ExprPtr make(ExprKind kind, SourcePos pos) {
  auto expr = std::make_unique<Expr>();
  expr->kind = kind;
  expr->pos = pos;
  return expr;
}

ExprPtr make_binary(BinaryOp op, SourcePos pos, ExprPtr left, ExprPtr right) {
  auto expr = make(ExprKind::kBinary, pos);
  expr->binary_op = op;
  expr->operands.push_back(std::move(left));
  expr->operands.push_back(std::move(right));
  return expr;
}

class ExpressionParser {
 public:
  explicit ExpressionParser(TokenStream& tokens) : t_(tokens) {}

  ExprPtr expression(bool with_conditional) {
    return with_conditional ? conditional() : logical_or();
  }

  ExprPtr tuple(bool with_conditional, bool explicit_parentheses) {
    const SourcePos pos = t_.peek().pos;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) t_.expect_op(",");
      if (t_.at(TokenKind::kOutputEnd) || t_.at(TokenKind::kBlockEnd) || t_.at_op(")")) break;
      items.push_back(expression(with_conditional));
      if (!t_.at_op(",")) break;
      is_tuple = true;
    }
    if (!is_tuple && items.size() == 1) return std::move(items[0]);
    if (items.empty() && !explicit_parentheses) {
      t_.fail_here(fmt::format("expected an expression, got {}", TokenStream::describe(t_.peek())));
    }
    auto list = make(ExprKind::kList, pos);
    list->operands = std::move(items);
    return list;
  }

  ExprPtr filter(ExprPtr operand) {
    t_.expect_op("|");
    const SourcePos pos = t_.peek().pos;
    auto expr = make(ExprKind::kFilter, pos);
    expr->name = t_.expect_name("a filter name");
    if (!has_filter(expr->name)) t_.fail_at(pos, fmt::format("no filter named '{}'", expr->name));
    expr->operands.push_back(std::move(operand));
    if (t_.at_op("(")) call_arguments(*expr);
    return expr;
  }

 private:
  ExprPtr conditional() {
    ExprPtr then_value = logical_or();
    while (t_.at_name("if")) {
      const SourcePos pos = t_.next().pos;
      auto expr = make(ExprKind::kConditional, pos);
      ExprPtr condition = logical_or();
      ExprPtr else_value;
      if (t_.at_name("else")) {
        t_.next();
        else_value = conditional();
      }
      expr->operands.push_back(std::move(then_value));
      expr->operands.push_back(std::move(condition));
      expr->operands.push_back(std::move(else_value));
      then_value = std::move(expr);
    }
    return then_value;
  }

  ExprPtr logical_or() {
    ExprPtr left = logical_and();
    while (t_.at_name("or")) {
      const SourcePos pos = t_.next().pos;
      left = make_binary(BinaryOp::kOr, pos, std::move(left), logical_and());
    }
    return left;
  }

  ExprPtr logical_and() {
    ExprPtr left = logical_not();
    while (t_.at_name("and")) {
      const SourcePos pos = t_.next().pos;
      left = make_binary(BinaryOp::kAnd, pos, std::move(left), logical_not());
    }
    return left;
  }

  ExprPtr logical_not() {
    if (!t_.at_name("not")) return comparison();
    auto expr = make(ExprKind::kUnary, t_.next().pos);
    expr->unary_op = UnaryOp::kNot;
    expr->operands.push_back(logical_not());
    return expr;
  }

  ExprPtr comparison() {
    const SourcePos pos = t_.peek().pos;
    ExprPtr first = sum();
    auto expr = make(ExprKind::kCompare, pos);
    expr->operands.push_back(std::move(first));
    while (true) {
      static constexpr std::pair<std::string_view, BinaryOp> kOps[] = {
          {"==", BinaryOp::kEq}, {"!=", BinaryOp::kNe}, {"<", BinaryOp::kLt},
          {"<=", BinaryOp::kLe}, {">", BinaryOp::kGt},  {">=", BinaryOp::kGe}};
      bool matched = false;
      for (const auto& [text, op] : kOps) {
        if (t_.at_op(text)) {
          expr->compare_ops.push_back(op);
          matched = true;
        }
      }
      if (matched) {
        t_.next();
      } else if (t_.at_name("in")) {
        t_.next();
        expr->compare_ops.push_back(BinaryOp::kIn);
      } else if (t_.at_name("not") && t_.at_name("in", 1)) {
        t_.next();
        t_.next();
        expr->compare_ops.push_back(BinaryOp::kNotIn);
      } else {
        break;
      }
      expr->operands.push_back(sum());
    }
    if (expr->compare_ops.empty()) return std::move(expr->operands[0]);
    return expr;
  }

  template <typename Next>
  ExprPtr left_associative(std::initializer_list<std::pair<std::string_view, BinaryOp>> ops,
                           Next next) {
    ExprPtr left = (this->*next)();
    while (true) {
      const std::pair<std::string_view, BinaryOp>* found = nullptr;
      for (const auto& op : ops) {
        if (t_.at_op(op.first)) found = &op;
      }
      if (found == nullptr) return left;
      const SourcePos pos = t_.next().pos;
      left = make_binary(found->second, pos, std::move(left), (this->*next)());
    }
  }

  ExprPtr sum() {
    return left_associative({{"+", BinaryOp::kAdd}, {"-", BinaryOp::kSub}},
                            &ExpressionParser::concatenation);
  }
  ExprPtr concatenation() {
    return left_associative({{"~", BinaryOp::kConcat}}, &ExpressionParser::product);
  }
  ExprPtr product() {
    return left_associative({{"*", BinaryOp::kMul},
                             {"/", BinaryOp::kDiv},
                             {"//", BinaryOp::kFloorDiv},
                             {"%", BinaryOp::kMod}},
                            &ExpressionParser::power);
  }
  ExprPtr power() {
    return left_associative({{"**", BinaryOp::kPow}}, &ExpressionParser::unary_with_filters);
  }
  ExprPtr unary_with_filters() { return unary(true); }

  ExprPtr unary(bool with_filters) {
    // Every nested operand passes through here; the limit keeps hostile input off the stack.
    if (depth_ >= kMaxNesting) t_.fail_here("expression nested too deeply");
    ++depth_;
    ExprPtr node = unary_at_depth(with_filters);
    --depth_;
    return node;
  }

  ExprPtr unary_at_depth(bool with_filters) {
    ExprPtr node;
    if (t_.at_op("-") || t_.at_op("+")) {
      const Token& sign = t_.next();
      node = make(ExprKind::kUnary, sign.pos);
      node->unary_op = sign.text == "-" ? UnaryOp::kNeg : UnaryOp::kPos;
      node->operands.push_back(unary(false));
    } else {
      node = primary();
    }
    node = postfix(std::move(node));
    if (!with_filters) return node;
    while (true) {
      if (t_.at_op("|")) {
        node = filter(std::move(node));
      } else if (t_.at_name("is")) {
        node = test(std::move(node));
      } else if (t_.at_op("(")) {
        node = call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr primary() {
    const Token& token = t_.peek();
    switch (token.kind) {
      case TokenKind::kName: {
        t_.next();
        auto expr = make(ExprKind::kLiteral, token.pos);
        if (token.text == "true" || token.text == "True") {
          expr->literal = Value::boolean(true);
        } else if (token.text == "false" || token.text == "False") {
          expr->literal = Value::boolean(false);
        } else if (token.text == "none" || token.text == "None") {
          expr->literal = Value::none();
        } else {
          expr->kind = ExprKind::kName;
          expr->name = token.text;
        }
        return expr;
      }
      case TokenKind::kString: {
        auto expr = make(ExprKind::kLiteral, token.pos);
        std::string text;
        while (t_.at(TokenKind::kString)) text += t_.next().text;  // 'a' 'b' is 'ab'
        expr->literal = Value::string(std::move(text));
        return expr;
      }
      case TokenKind::kInteger:
      case TokenKind::kFloat: {
        t_.next();
        auto expr = make(ExprKind::kLiteral, token.pos);
        expr->literal = token.kind == TokenKind::kInteger ? Value::integer(token.integer)
                                                          : Value::number(token.number);
        return expr;
      }
      case TokenKind::kOperator:
        if (token.text == "(") {
          t_.next();
          ExprPtr inner = tuple(true, true);
          t_.expect_op(")");
          return inner;
        }
        if (token.text == "[") return list();
        if (token.text == "{") return dict();
        break;
      default:
        break;
    }
    t_.fail_here(fmt::format("unexpected {}", TokenStream::describe(token)));
  }

  ExprPtr list() {
    auto expr = make(ExprKind::kList, t_.next().pos);
    while (!t_.at_op("]")) {
      if (!expr->operands.empty()) t_.expect_op(",");
      if (t_.at_op("]")) break;
      expr->operands.push_back(expression(true));
    }
    t_.expect_op("]");
    return expr;
  }

  ExprPtr dict() {
    auto expr = make(ExprKind::kDict, t_.next().pos);
    while (!t_.at_op("}")) {
      if (!expr->operands.empty()) t_.expect_op(",");
      if (t_.at_op("}")) break;
      expr->operands.push_back(expression(true));
      t_.expect_op(":");
      expr->operands.push_back(expression(true));
    }
    t_.expect_op("}");
    return expr;
  }

  ExprPtr postfix(ExprPtr node) {
    while (true) {
      if (t_.at_op(".")) {
        t_.next();
        const Token& token = t_.peek();
        if (token.kind == TokenKind::kInteger) {  // `x.0` is x[0]
          t_.next();
          auto index = make(ExprKind::kLiteral, token.pos);
          index->literal = Value::integer(token.integer);
          auto expr = make(ExprKind::kSubscript, token.pos);
          expr->operands.push_back(std::move(node));
          expr->operands.push_back(std::move(index));
          node = std::move(expr);
          continue;
        }
        auto expr = make(ExprKind::kAttribute, token.pos);
        expr->name = t_.expect_name("an attribute name");
        expr->operands.push_back(std::move(node));
        node = std::move(expr);
      } else if (t_.at_op("[")) {
        node = subscript(std::move(node));
      } else if (t_.at_op("(")) {
        node = call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr subscript(ExprPtr object) {
    const SourcePos pos = t_.next().pos;
    ExprPtr start;
    if (!t_.at_op(":")) start = expression(true);
    if (!t_.at_op(":")) {
      t_.expect_op("]");
      auto expr = make(ExprKind::kSubscript, pos);
      expr->operands.push_back(std::move(object));
      expr->operands.push_back(std::move(start));
      return expr;
    }
    t_.next();
    ExprPtr stop;
    ExprPtr step;
    if (!t_.at_op("]") && !t_.at_op(":")) stop = expression(true);
    if (t_.at_op(":")) {
      t_.next();
      if (!t_.at_op("]")) step = expression(true);
    }
    t_.expect_op("]");
    auto expr = make(ExprKind::kSlice, pos);
    expr->operands.push_back(std::move(object));
    expr->operands.push_back(std::move(start));
    expr->operands.push_back(std::move(stop));
    expr->operands.push_back(std::move(step));
    return expr;
  }

  ExprPtr call(ExprPtr callee) {
    auto expr = make(ExprKind::kCall, callee->pos);
    expr->operands.push_back(std::move(callee));
    call_arguments(*expr);
    return expr;
  }

  // `(a, b, key=value)` appended to expr's operands and kwargs.
  void call_arguments(Expr& expr) {
    t_.expect_op("(");
    bool first = true;
    while (!t_.at_op(")")) {
      if (!first) t_.expect_op(",");
      first = false;
      if (t_.at_op(")")) break;
      if (t_.at_op("*") || t_.at_op("**"))
        t_.fail_here("*args and **kwargs calls are not supported");
      if (t_.at(TokenKind::kName) && t_.at_op("=", 1)) {
        std::string key = t_.next().text;
        t_.next();
        expr.kwargs.emplace_back(std::move(key), expression(true));
        continue;
      }
      if (!expr.kwargs.empty()) t_.fail_here("positional argument follows keyword argument");
      expr.operands.push_back(expression(true));
    }
    t_.expect_op(")");
  }

  ExprPtr test(ExprPtr operand) {
    t_.next();  // is
    bool negated = false;
    if (t_.at_name("not")) {
      t_.next();
      negated = true;
    }
    const SourcePos pos = t_.peek().pos;
    auto expr = make(ExprKind::kTest, pos);
    expr->name = t_.expect_name("a test name");
    expr->negated = negated;
    if (!has_test(expr->name)) t_.fail_at(pos, fmt::format("no test named '{}'", expr->name));
    expr->operands.push_back(std::move(operand));
    const Token& next = t_.peek();
    const bool bare_argument = (next.kind == TokenKind::kName || next.kind == TokenKind::kString ||
                                next.kind == TokenKind::kInteger ||
                                next.kind == TokenKind::kFloat || t_.at_op("[") || t_.at_op("{")) &&
                               !t_.at_name("else") && !t_.at_name("or") && !t_.at_name("and");
    if (t_.at_op("(")) {
      call_arguments(*expr);
    } else if (bare_argument) {  // jinja2: `x is divisibleby 3`, `x is sameas none`
      if (t_.at_name("is")) t_.fail_here("you cannot chain multiple tests with is");
      expr->operands.push_back(postfix(primary()));
    }
    return expr;
  }

  static constexpr int kMaxNesting = 200;
  TokenStream& t_;
  int depth_ = 0;
};

}  // namespace

ExprPtr parse_expression(TokenStream& tokens, bool with_conditional) {
  return ExpressionParser(tokens).expression(with_conditional);
}

ExprPtr parse_tuple(TokenStream& tokens, bool with_conditional) {
  return ExpressionParser(tokens).tuple(with_conditional, false);
}

ExprPtr parse_filter(TokenStream& tokens, ExprPtr operand) {
  return ExpressionParser(tokens).filter(std::move(operand));
}

}  // namespace minimax::jinja
