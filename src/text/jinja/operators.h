// Python semantics of the template operators: arithmetic (+ - * / // % **), string concatenation
// (~), comparisons, membership (in), over interpreter values.
#pragma once

#include "text/jinja/value.h"

namespace minimax::jinja {

enum class BinaryOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kConcat,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,
  kNotIn,
  kAnd,
  kOr,  // short-circuit: evaluated by the evaluator, never by apply_binary
};
enum class UnaryOp { kNeg, kPos, kNot };

// The operator as written in a template, for messages.
const char* operator_text(BinaryOp op);

Value apply_binary(BinaryOp op, const Value& a, const Value& b);
Value apply_unary(UnaryOp op, const Value& operand);

// Python's a < b (etc.) for numbers, strings and lists; fails like Python for other pairs.
bool less_than(const Value& a, const Value& b, BinaryOp op_for_message);
// Python's `needle in container`.
bool contains(const Value& container, const Value& needle);

}  // namespace minimax::jinja
