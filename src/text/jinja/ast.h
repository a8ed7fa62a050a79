// The syntax tree of a parsed template: expressions and statements, each with its source position.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/jinja/operators.h"
#include "text/jinja/template_error.h"
#include "text/jinja/value.h"

namespace minimax::jinja {

enum class ExprKind {
  kLiteral,      // literal
  kName,         // name
  kList,         // operands: items (tuples are lists too)
  kDict,         // operands: key, value, key, value, ...
  kAttribute,    // operands[0].name
  kSubscript,    // operands[0][operands[1]]
  kSlice,        // operands[0][operands[1]:operands[2]:operands[3]], absent parts null
  kCall,         // operands[0](operands[1..], kwargs)
  kFilter,       // operands[0] | name(operands[1..], kwargs)
  kTest,         // operands[0] is [not] name(operands[1..])
  kUnary,        // unary_op operands[0]
  kBinary,       // operands[0] binary_op operands[1] (and/or short-circuit)
  kCompare,      // operands[0] compare_ops[0] operands[1] compare_ops[1] operands[2] ...
  kConditional,  // operands[0] if operands[1] else operands[2] (operands[2] may be null)
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind;
  SourcePos pos;
  std::string name;
  Value literal;
  std::vector<ExprPtr> operands;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  BinaryOp binary_op = BinaryOp::kAdd;
  UnaryOp unary_op = UnaryOp::kNot;
  std::vector<BinaryOp> compare_ops;
  bool negated = false;  // `is not`
};

enum class StmtKind {
  kText,      // text
  kOutput,    // {{ expr }}
  kIf,        // branches, else_body
  kFor,       // for names in expr [if condition]: body, else else_body
  kSet,       // set names = expr, or set target.attribute = expr
  kSetBlock,  // set names[0] | filters: body captured as a string
  kMacro,     // macro name(params): body
  kBreak,
  kContinue,
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

struct IfBranch {
  ExprPtr condition;
  Body body;
};

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // null: required (undefined when not given)
};

struct Stmt {
  StmtKind kind;
  SourcePos pos;
  std::string text;
  ExprPtr expr;
  std::vector<std::string> names;
  ExprPtr target;                // kSet on an attribute: the object
  std::string attribute;         // kSet on an attribute: its name
  ExprPtr condition;             // kFor: the `if` filter
  std::vector<ExprPtr> filters;  // kSetBlock: filters applied to the captured text (operand null)
  std::vector<IfBranch> branches;
  Body body;
  Body else_body;
  std::string name;  // kMacro
  std::vector<MacroParam> params;
};

}  // namespace minimax::jinja
