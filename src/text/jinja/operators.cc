// Template operators with Python's rules: int/float promotion, floor division and modulo signs,
// sequence repetition and concatenation, lexicographic list ordering.
#include "text/jinja/operators.h"

#include <cmath>
#include <string>

#include "base/error.h"

namespace minimax::jinja {
namespace {

constexpr size_t kMaxRepeatedBytes = size_t{64} << 20;  // guards 'x' * 10**12

bool is_integral(const Value& v) {
  return v.kind() == Value::Kind::kInt || v.kind() == Value::Kind::kBool;
}

[[noreturn]] void fail_operands(BinaryOp op, const Value& a, const Value& b) {
  fail("unsupported operand type(s) for {}: '{}' and '{}'", operator_text(op), type_name(a),
       type_name(b));
}

// a (op) b for int64 with overflow reported instead of wrapped (Python ints do not overflow).
int64_t checked_int(BinaryOp op, int64_t a, int64_t b) {
  int64_t result = 0;
  bool overflow = false;
  switch (op) {
    case BinaryOp::kAdd:
      overflow = __builtin_add_overflow(a, b, &result);
      break;
    case BinaryOp::kSub:
      overflow = __builtin_sub_overflow(a, b, &result);
      break;
    case BinaryOp::kMul:
      overflow = __builtin_mul_overflow(a, b, &result);
      break;
    default:
      fail("internal error: checked_int({})", operator_text(op));
  }
  if (overflow) fail("integer overflow in '{}'", operator_text(op));
  return result;
}

Value arithmetic(BinaryOp op, const Value& a, const Value& b) {
  if (is_integral(a) && is_integral(b)) {
    const int64_t x = a.as_int();
    const int64_t y = b.as_int();
    switch (op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSub:
      case BinaryOp::kMul:
        return Value::integer(checked_int(op, x, y));
      case BinaryOp::kFloorDiv:
      case BinaryOp::kMod: {
        if (y == 0) fail("integer division or modulo by zero");
        int64_t q = x / y;
        int64_t m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {  // Python rounds the quotient toward -infinity
          q -= 1;
          m += y;
        }
        return Value::integer(op == BinaryOp::kFloorDiv ? q : m);
      }
      case BinaryOp::kPow: {
        if (y < 0) {
          if (x == 0) fail("0.0 cannot be raised to a negative power");
          return Value::number(std::pow(static_cast<double>(x), static_cast<double>(y)));
        }
        int64_t result = 1;
        for (int64_t i = 0; i < y; ++i) {
          result = checked_int(BinaryOp::kMul, result, x);
        }
        return Value::integer(result);
      }
      default:
        break;
    }
  }
  const double x = a.as_double();
  const double y = b.as_double();
  switch (op) {
    case BinaryOp::kAdd:
      return Value::number(x + y);
    case BinaryOp::kSub:
      return Value::number(x - y);
    case BinaryOp::kMul:
      return Value::number(x * y);
    case BinaryOp::kDiv:
      if (y == 0) fail("division by zero");
      return Value::number(x / y);
    case BinaryOp::kFloorDiv:
      if (y == 0) fail("float floor division by zero");
      return Value::number(std::floor(x / y));
    case BinaryOp::kMod: {
      if (y == 0) fail("float modulo");
      double m = std::fmod(x, y);
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      return Value::number(m);
    }
    case BinaryOp::kPow:
      if (x == 0 && y < 0) fail("0.0 cannot be raised to a negative power");
      return Value::number(std::pow(x, y));
    default:
      break;
  }
  fail_operands(op, a, b);
}

Value repeat(const Value& sequence, int64_t count) {
  const size_t times = count > 0 ? static_cast<size_t>(count) : 0;
  if (sequence.is_string()) {
    if (times != 0 && sequence.str().size() > kMaxRepeatedBytes / times) {
      fail("string repetition result is too large");
    }
    std::string out;
    for (size_t i = 0; i < times; ++i) out += sequence.str();
    return Value::string(std::move(out));
  }
  if (times != 0 && sequence.size() > kMaxRepeatedBytes / 16 / times) {
    fail("list repetition result is too large");
  }
  Json out = Json::array();
  for (size_t i = 0; i < times; ++i) {
    for (const Json& item : sequence.json()) out.push_back(item);
  }
  return Value::from_json(std::move(out));
}

int order(const Value& a, const Value& b, BinaryOp op) {
  if (a.is_number() && b.is_number()) {
    if (is_integral(a) && is_integral(b))
      return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int();
    return a.as_double() < b.as_double() ? -1 : a.as_double() > b.as_double();
  }
  if (a.is_string() && b.is_string()) return a.str().compare(b.str()) < 0 ? -1 : a.str() != b.str();
  if (a.is_list() && b.is_list()) {
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      if (!equal(a.item(i), b.item(i))) return order(a.item(i), b.item(i), op);
    }
    return a.size() < b.size() ? -1 : a.size() > b.size();
  }
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  fail("'{}' not supported between instances of '{}' and '{}'", operator_text(op), type_name(a),
       type_name(b));
}

}  // namespace

const char* operator_text(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return "+";
    case BinaryOp::kSub:
      return "-";
    case BinaryOp::kMul:
      return "*";
    case BinaryOp::kDiv:
      return "/";
    case BinaryOp::kFloorDiv:
      return "//";
    case BinaryOp::kMod:
      return "%";
    case BinaryOp::kPow:
      return "**";
    case BinaryOp::kConcat:
      return "~";
    case BinaryOp::kEq:
      return "==";
    case BinaryOp::kNe:
      return "!=";
    case BinaryOp::kLt:
      return "<";
    case BinaryOp::kLe:
      return "<=";
    case BinaryOp::kGt:
      return ">";
    case BinaryOp::kGe:
      return ">=";
    case BinaryOp::kIn:
      return "in";
    case BinaryOp::kNotIn:
      return "not in";
    case BinaryOp::kAnd:
      return "and";
    case BinaryOp::kOr:
      return "or";
  }
  return "?";
}

bool less_than(const Value& a, const Value& b, BinaryOp op_for_message) {
  return order(a, b, op_for_message) < 0;
}

bool contains(const Value& container, const Value& needle) {
  switch (container.kind()) {
    case Value::Kind::kUndefined:
      return false;  // jinja2's Undefined iterates as empty
    case Value::Kind::kString:
      if (!needle.is_string()) {
        fail("'in <string>' requires string as left operand, not {}", type_name(needle));
      }
      return container.str().find(needle.str()) != std::string::npos;
    case Value::Kind::kList:
      for (size_t i = 0; i < container.size(); ++i) {
        if (equal(container.item(i), needle)) return true;
      }
      return false;
    case Value::Kind::kDict:
      if (needle.is_list() || needle.is_dict()) fail("unhashable type: '{}'", type_name(needle));
      return needle.is_string() && container.has_member(needle.str());
    default:
      break;
  }
  fail("argument of type '{}' is not iterable", type_name(container));
}

Value apply_binary(BinaryOp op, const Value& a, const Value& b) {
  switch (op) {
    case BinaryOp::kConcat:
      return Value::string(to_str(a) + to_str(b));
    case BinaryOp::kEq:
      return Value::boolean(equal(a, b));
    case BinaryOp::kNe:
      return Value::boolean(!equal(a, b));
    case BinaryOp::kLt:
      return Value::boolean(order(a, b, op) < 0);
    case BinaryOp::kLe:
      return Value::boolean(order(a, b, op) <= 0);
    case BinaryOp::kGt:
      return Value::boolean(order(a, b, op) > 0);
    case BinaryOp::kGe:
      return Value::boolean(order(a, b, op) >= 0);
    case BinaryOp::kIn:
      return Value::boolean(contains(b, a));
    case BinaryOp::kNotIn:
      return Value::boolean(!contains(b, a));
    case BinaryOp::kAnd:
    case BinaryOp::kOr:
      fail("internal error: '{}' reached apply_binary", operator_text(op));
    default:
      break;
  }
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  if (a.is_number() && b.is_number()) return arithmetic(op, a, b);
  if (op == BinaryOp::kAdd && a.is_string() && b.is_string())
    return Value::string(a.str() + b.str());
  if (op == BinaryOp::kAdd && a.is_list() && b.is_list()) {
    Json out = a.json();
    for (const Json& item : b.json()) out.push_back(item);
    return Value::from_json(std::move(out));
  }
  if (op == BinaryOp::kAdd && (a.is_string() || a.is_list())) {
    fail("can only concatenate {} (not \"{}\") to {}", type_name(a), type_name(b), type_name(a));
  }
  if (op == BinaryOp::kMul && (a.is_string() || a.is_list()) && is_integral(b)) {
    return repeat(a, b.as_int());
  }
  if (op == BinaryOp::kMul && (b.is_string() || b.is_list()) && is_integral(a)) {
    return repeat(b, a.as_int());
  }
  if (op == BinaryOp::kMod && a.is_string()) {
    fail("printf-style string formatting ('...' % value) is not supported");
  }
  fail_operands(op, a, b);
}

Value apply_unary(UnaryOp op, const Value& operand) {
  if (op == UnaryOp::kNot) return Value::boolean(!truthy(operand));
  if (operand.is_undefined()) fail_undefined(operand);
  if (!operand.is_number()) {
    fail("bad operand type for unary {}: '{}'", op == UnaryOp::kNeg ? "-" : "+",
         type_name(operand));
  }
  if (operand.kind() == Value::Kind::kFloat) {
    return Value::number(op == UnaryOp::kNeg ? -operand.as_double() : operand.as_double());
  }
  const int64_t x = operand.as_int();
  if (op == UnaryOp::kNeg && x == INT64_MIN) fail("integer overflow in unary '-'");
  return Value::integer(op == UnaryOp::kNeg ? -x : x);
}

}  // namespace minimax::jinja
