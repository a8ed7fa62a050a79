// The table of Jinja tests, each with jinja2's definition (Undefined counts as iterable and as a
// sequence; booleans count as numbers; `lower`/`upper` look at str(value)).
#include "text/jinja/predicates.h"

#include "base/error.h"
#include "text/jinja/arguments.h"
#include "text/jinja/filters.h"
#include "text/jinja/operators.h"
#include "text/jinja/unicode.h"

namespace minimax::jinja {
namespace {

using Kind = Value::Kind;
using TestFunction = bool (*)(std::string_view name, const Value&, CallArgs&);

Value one_argument(std::string_view name, CallArgs& call) {
  BoundArgs args(name, call, {"other"});
  return args.get(0);
}

void no_arguments(std::string_view name, CallArgs& call) { BoundArgs(name, call, {}); }

bool kind_in(const Value& v, std::initializer_list<Kind> kinds) {
  for (Kind k : kinds) {
    if (v.kind() == k) return true;
  }
  return false;
}

int64_t integer_operand(std::string_view name, const Value& v) {
  if (v.is_undefined()) fail_undefined(v);
  if (!kind_in(v, {Kind::kInt, Kind::kBool}))
    fail("test '{}' needs an integer, got {}", name, type_name(v));
  return v.as_int();
}

bool has_cased(std::string_view text, bool want_lower) {
  bool cased = false;
  for (char32_t c : decode_utf8(text)) {
    if (to_lower(c) == to_upper(c)) continue;
    if ((want_lower && to_lower(c) != c) || (!want_lower && to_upper(c) != c)) return false;
    cased = true;
  }
  return cased;
}

struct Test {
  std::string_view name;
  TestFunction function;
};

#define MINIMAX_KIND_TEST(test_name, ...)                            \
  Test {                                                             \
    test_name, [](std::string_view n, const Value& v, CallArgs& a) { \
      no_arguments(n, a);                                            \
      return kind_in(v, {__VA_ARGS__});                              \
    }                                                                \
  }

#define MINIMAX_COMPARE_TEST(test_name, op)                          \
  Test {                                                             \
    test_name, [](std::string_view n, const Value& v, CallArgs& a) { \
      return truthy(apply_binary(op, v, one_argument(n, a)));        \
    }                                                                \
  }

const Test kTests[] = {
    MINIMAX_KIND_TEST("undefined", Kind::kUndefined),
    Test{"defined",
         [](std::string_view n, const Value& v, CallArgs& a) {
           no_arguments(n, a);
           return !v.is_undefined();
         }},
    MINIMAX_KIND_TEST("none", Kind::kNone),
    MINIMAX_KIND_TEST("boolean", Kind::kBool),
    Test{"true",
         [](std::string_view n, const Value& v, CallArgs& a) {
           no_arguments(n, a);
           return v.kind() == Kind::kBool && v.as_int() == 1;
         }},
    Test{"false",
         [](std::string_view n, const Value& v, CallArgs& a) {
           no_arguments(n, a);
           return v.kind() == Kind::kBool && v.as_int() == 0;
         }},
    MINIMAX_KIND_TEST("integer", Kind::kInt),
    MINIMAX_KIND_TEST("float", Kind::kFloat),
    MINIMAX_KIND_TEST("number", Kind::kInt, Kind::kFloat, Kind::kBool),
    MINIMAX_KIND_TEST("string", Kind::kString),
    MINIMAX_KIND_TEST("mapping", Kind::kDict),
    MINIMAX_KIND_TEST("iterable", Kind::kUndefined, Kind::kString, Kind::kList, Kind::kDict),
    MINIMAX_KIND_TEST("sequence", Kind::kUndefined, Kind::kString, Kind::kList, Kind::kDict),
    MINIMAX_KIND_TEST("callable", Kind::kCallable, Kind::kUndefined),
    Test{"sameas",
         [](std::string_view n, const Value& v, CallArgs& a) {
           const Value other = one_argument(n, a);
           if (v.kind() != other.kind()) return false;
           if (v.is_none() || v.is_undefined()) return true;
           if (v.kind() == Kind::kBool) return v.as_int() == other.as_int();
           if (v.is_data()) return v.shared_json() == other.shared_json();
           return equal(v, other);
         }},
    MINIMAX_COMPARE_TEST("eq", BinaryOp::kEq),
    MINIMAX_COMPARE_TEST("equalto", BinaryOp::kEq),
    MINIMAX_COMPARE_TEST("==", BinaryOp::kEq),
    MINIMAX_COMPARE_TEST("ne", BinaryOp::kNe),
    MINIMAX_COMPARE_TEST("!=", BinaryOp::kNe),
    MINIMAX_COMPARE_TEST("lt", BinaryOp::kLt),
    MINIMAX_COMPARE_TEST("lessthan", BinaryOp::kLt),
    MINIMAX_COMPARE_TEST("<", BinaryOp::kLt),
    MINIMAX_COMPARE_TEST("le", BinaryOp::kLe),
    MINIMAX_COMPARE_TEST("<=", BinaryOp::kLe),
    MINIMAX_COMPARE_TEST("gt", BinaryOp::kGt),
    MINIMAX_COMPARE_TEST("greaterthan", BinaryOp::kGt),
    MINIMAX_COMPARE_TEST(">", BinaryOp::kGt),
    MINIMAX_COMPARE_TEST("ge", BinaryOp::kGe),
    MINIMAX_COMPARE_TEST(">=", BinaryOp::kGe),
    MINIMAX_COMPARE_TEST("in", BinaryOp::kIn),
    Test{"odd",
         [](std::string_view n, const Value& v, CallArgs& a) {
           no_arguments(n, a);
           return integer_operand(n, v) % 2 != 0;
         }},
    Test{"even",
         [](std::string_view n, const Value& v, CallArgs& a) {
           no_arguments(n, a);
           return integer_operand(n, v) % 2 == 0;
         }},
    Test{"divisibleby",
         [](std::string_view n, const Value& v, CallArgs& a) {
           const int64_t divisor = integer_operand(n, one_argument(n, a));
           if (divisor == 0) fail("integer division or modulo by zero");
           return integer_operand(n, v) % divisor == 0;
         }},
    Test{"lower",
         [](std::string_view n, const Value& v, CallArgs& a) {
           no_arguments(n, a);
           return has_cased(to_str(v), true);
         }},
    Test{"upper",
         [](std::string_view n, const Value& v, CallArgs& a) {
           no_arguments(n, a);
           return has_cased(to_str(v), false);
         }},
    Test{"filter",
         [](std::string_view n, const Value& v, CallArgs& a) {
           no_arguments(n, a);
           return v.is_string() && has_filter(v.str());
         }},
};

#undef MINIMAX_KIND_TEST
#undef MINIMAX_COMPARE_TEST

const Test* find_test(std::string_view name) {
  for (const Test& test : kTests) {
    if (test.name == name) return &test;
  }
  return nullptr;
}

}  // namespace

bool has_test(std::string_view name) { return find_test(name) != nullptr; }

bool apply_test(std::string_view name, const Value& operand, CallArgs& args) {
  const Test* test = find_test(name);
  if (test == nullptr) fail("no test named '{}'", name);
  return test->function(name, operand, args);
}

}  // namespace minimax::jinja
