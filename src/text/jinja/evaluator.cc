// The tree-walking evaluator: statements append to the output, expressions produce Values, and any
// error is re-thrown with the template position of the innermost construct that failed.
#include "text/jinja/evaluator.h"

#include <fmt/format.h>

#include <memory>

#include "base/error.h"
#include "text/jinja/access.h"
#include "text/jinja/filters.h"
#include "text/jinja/globals.h"
#include "text/jinja/predicates.h"

namespace minimax::jinja {
namespace {

constexpr int kMaxMacroDepth = 200;

// One scope: the globals, the template's top level, a loop iteration or a macro call.
struct Frame {
  std::shared_ptr<Frame> parent;
  std::vector<std::pair<std::string, Value>> vars;

  void set(const std::string& name, Value value) {
    for (auto& [key, existing] : vars) {
      if (key == name) {
        existing = std::move(value);
        return;
      }
    }
    vars.emplace_back(name, std::move(value));
  }
};

enum class Flow { kNormal, kBreak, kContinue };

class Evaluator {
 public:
  Evaluator(std::string_view template_name, const Json& context) : name_(template_name) {
    auto globals = new_frame(nullptr);
    globals->vars =
        make_globals([this](const std::shared_ptr<Object>& object) { objects_.push_back(object); });
    frame_ = new_frame(globals);
    // Members alias the caller's context; the empty owner makes the pointers non-owning.
    const std::shared_ptr<const Json> root(std::shared_ptr<const Json>(), &context);
    for (auto it = context.begin(); it != context.end(); ++it) {
      frame_->set(it.key(), Value::ref(std::shared_ptr<const Json>(root, &it.value())));
    }
    for (const char* key : {"tools", "documents"}) {
      if (!context.contains(key)) frame_->set(key, Value::none());
    }
    if (!context.contains("add_generation_prompt")) {
      frame_->set("add_generation_prompt", Value::boolean(false));
    }
  }

  // Macros hold their defining frame weakly, so frames never own themselves; a namespace can
  // (`set ns.me = ns`), so every namespace is emptied when rendering ends, finished or failed.
  ~Evaluator() {
    for (const auto& weak : objects_) {
      if (auto object = weak.lock()) object->attributes.clear();
    }
  }

  std::string render(const Body& body) {
    std::string out;
    out_ = &out;
    exec(body);
    return out;
  }

 private:
  static std::shared_ptr<Frame> new_frame(std::shared_ptr<Frame> parent) {
    auto frame = std::make_shared<Frame>();
    frame->parent = std::move(parent);
    return frame;
  }

  Value lookup(const std::string& name) const {
    for (const Frame* frame = frame_.get(); frame != nullptr; frame = frame->parent.get()) {
      for (const auto& [key, value] : frame->vars) {
        if (key == name) return value;
      }
    }
    return Value::undefined(fmt::format("'{}' is undefined", name));
  }

  Flow exec(const Body& body) {
    for (const auto& stmt : body) {
      const Flow flow = exec_located(*stmt);
      if (flow != Flow::kNormal) return flow;
    }
    return Flow::kNormal;
  }

  Flow exec_located(const Stmt& stmt) {
    try {
      return exec(stmt);
    } catch (const TemplateError&) {
      throw;
    } catch (const Error& error) {
      fail_at(name_, stmt.pos, error.what());
    } catch (const nlohmann::json::exception& error) {
      fail_at(name_, stmt.pos, error.what());
    }
  }

  Flow exec(const Stmt& stmt) {
    switch (stmt.kind) {
      case StmtKind::kText:
        *out_ += stmt.text;
        return Flow::kNormal;
      case StmtKind::kOutput:
        *out_ += to_str(eval(*stmt.expr));
        return Flow::kNormal;
      case StmtKind::kIf:
        for (const IfBranch& branch : stmt.branches) {
          if (truthy(eval(*branch.condition))) return exec(branch.body);
        }
        return exec(stmt.else_body);
      case StmtKind::kFor:
        return exec_for(stmt);
      case StmtKind::kSet:
        if (stmt.target != nullptr) {
          const Value object = eval(*stmt.target);
          if (object.kind() != Value::Kind::kObject || !object.object().assignable) {
            fail("cannot assign attribute on non-namespace object ({})", type_name(object));
          }
          object.object().set(stmt.attribute, eval(*stmt.expr));
        } else {
          assign(stmt.names, eval(*stmt.expr), *frame_);
        }
        return Flow::kNormal;
      case StmtKind::kSetBlock: {
        Value captured = Value::string(capture(stmt.body));
        for (const ExprPtr& filter : stmt.filters) captured = apply_filter_expr(*filter, captured);
        frame_->set(stmt.names[0], std::move(captured));
        return Flow::kNormal;
      }
      case StmtKind::kMacro:
        frame_->set(stmt.name, make_macro(stmt));
        return Flow::kNormal;
      case StmtKind::kBreak:
        return Flow::kBreak;
      case StmtKind::kContinue:
        return Flow::kContinue;
    }
    return Flow::kNormal;
  }

  // Binds `names` to value (several names unpack a list), in frame.
  static void assign(const std::vector<std::string>& names, const Value& value, Frame& frame) {
    if (names.size() == 1) return frame.set(names[0], value);
    if (!value.is_list()) fail("cannot unpack a {} into {} names", type_name(value), names.size());
    if (value.size() != names.size()) {
      fail("{} values to unpack (expected {}, got {})",
           value.size() > names.size() ? "too many" : "not enough", names.size(), value.size());
    }
    for (size_t i = 0; i < names.size(); ++i) frame.set(names[i], value.item(i));
  }

  std::string capture(const Body& body) {
    std::string buffer;
    std::string* saved = out_;
    out_ = &buffer;
    try {
      exec(body);
    } catch (...) {
      out_ = saved;
      throw;
    }
    out_ = saved;
    return buffer;
  }

  // Runs body with frame_ set to frame, restoring the previous frame afterwards.
  Flow exec_in(const std::shared_ptr<Frame>& frame, const Body& body) {
    std::shared_ptr<Frame> saved = frame_;
    frame_ = frame;
    try {
      const Flow flow = exec(body);
      frame_ = saved;
      return flow;
    } catch (...) {
      frame_ = saved;
      throw;
    }
  }

  Flow exec_for(const Stmt& stmt) {
    std::vector<Value> items;
    try {
      items = iterate(eval(*stmt.expr));
    } catch (const TemplateError&) {
      throw;
    } catch (const Error& error) {
      fail_at(name_, stmt.expr->pos, error.what());
    }
    if (stmt.condition !=
        nullptr) {  // `for x in xs if cond`: filter first, loop.length counts kept
      std::vector<Value> kept;
      for (const Value& item : items) {
        auto probe = new_frame(frame_);
        assign(stmt.names, item, *probe);
        std::shared_ptr<Frame> saved = frame_;
        frame_ = probe;
        bool keep = false;
        try {
          keep = truthy(eval(*stmt.condition));
        } catch (...) {
          frame_ = saved;
          throw;
        }
        frame_ = saved;
        if (keep) kept.push_back(item);
      }
      items = std::move(kept);
    }
    if (items.empty()) return exec(stmt.else_body);
    const auto length = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < length; ++i) {
      auto frame = new_frame(frame_);
      assign(stmt.names, items[static_cast<size_t>(i)], *frame);
      frame->set("loop", loop_object(items, i));
      const Flow flow = exec_in(frame, stmt.body);
      if (flow == Flow::kBreak) break;
    }
    return Flow::kNormal;
  }

  Value loop_object(const std::vector<Value>& items, int64_t index) {
    const auto length = static_cast<int64_t>(items.size());
    auto loop = std::make_shared<Object>();
    loop->type_name = "LoopContext";
    loop->set("index0", Value::integer(index));
    loop->set("index", Value::integer(index + 1));
    loop->set("revindex0", Value::integer(length - index - 1));
    loop->set("revindex", Value::integer(length - index));
    loop->set("first", Value::boolean(index == 0));
    loop->set("last", Value::boolean(index == length - 1));
    loop->set("length", Value::integer(length));
    loop->set("depth", Value::integer(1));
    loop->set("depth0", Value::integer(0));
    loop->set("previtem", index > 0 ? items[static_cast<size_t>(index - 1)]
                                    : Value::undefined("there is no previous item"));
    loop->set("nextitem", index + 1 < length ? items[static_cast<size_t>(index + 1)]
                                             : Value::undefined("there is no next item"));
    loop->set("cycle", Value::callable("cycle", [index](CallArgs& args) {
                if (args.positional.empty()) fail("no items for cycling given");
                return args.positional[static_cast<size_t>(index) % args.positional.size()];
              }));
    return Value::object(loop);
  }

  Value make_macro(const Stmt& macro) {
    std::weak_ptr<Frame> closure = frame_;
    return Value::callable(macro.name, [this, &macro, closure](CallArgs& args) {
      return call_macro(macro, closure.lock(), args);
    });
  }

  Value call_macro(const Stmt& macro, std::shared_ptr<Frame> closure, CallArgs& args) {
    if (closure == nullptr) fail("macro '{}' was called after its scope ended", macro.name);
    if (args.positional.size() > macro.params.size()) {
      fail("macro '{}' takes not more than {} argument(s)", macro.name, macro.params.size());
    }
    if (macro_depth_ >= kMaxMacroDepth) fail("macro '{}' recursed too deeply", macro.name);
    auto frame = new_frame(std::move(closure));
    std::vector<bool> given(macro.params.size(), false);
    for (size_t i = 0; i < args.positional.size(); ++i) {
      frame->set(macro.params[i].name, args.positional[i]);
      given[i] = true;
    }
    for (const auto& [key, value] : args.keyword) {
      size_t i = 0;
      while (i < macro.params.size() && macro.params[i].name != key) ++i;
      if (i == macro.params.size())
        fail("macro '{}' takes no keyword argument '{}'", macro.name, key);
      if (given[i]) fail("macro '{}' got multiple values for argument '{}'", macro.name, key);
      frame->set(key, value);
      given[i] = true;
    }
    std::shared_ptr<Frame> saved = frame_;
    frame_ = frame;
    ++macro_depth_;
    std::string output;
    try {
      for (size_t i = 0; i < macro.params.size(); ++i) {
        if (given[i]) continue;
        const MacroParam& param = macro.params[i];
        frame->set(param.name, param.default_value != nullptr
                                   ? eval(*param.default_value)
                                   : Value::undefined(fmt::format("parameter '{}' was not provided",
                                                                  param.name)));
      }
      output = capture(macro.body);
    } catch (...) {
      frame_ = saved;
      --macro_depth_;
      throw;
    }
    frame_ = saved;
    --macro_depth_;
    return Value::string(std::move(output));
  }

  Value eval(const Expr& expr) {
    try {
      return eval_unlocated(expr);
    } catch (const TemplateError&) {
      throw;
    } catch (const Error& error) {
      fail_at(name_, expr.pos, error.what());
    } catch (const nlohmann::json::exception& error) {
      fail_at(name_, expr.pos, error.what());
    }
  }

  CallArgs eval_arguments(const Expr& expr, size_t first_positional) {
    CallArgs args;
    for (size_t i = first_positional; i < expr.operands.size(); ++i) {
      args.positional.push_back(eval(*expr.operands[i]));
    }
    for (const auto& [key, value] : expr.kwargs) args.keyword.emplace_back(key, eval(*value));
    return args;
  }

  Value apply_filter_expr(const Expr& filter, const Value& operand) {
    CallArgs args = eval_arguments(filter, 1);
    try {
      return apply_filter(filter.name, operand, args);
    } catch (const TemplateError&) {
      throw;
    } catch (const Error& error) {
      fail_at(name_, filter.pos, error.what());
    }
  }

  Value eval_unlocated(const Expr& expr) {
    switch (expr.kind) {
      case ExprKind::kLiteral:
        return expr.literal;
      case ExprKind::kName:
        return lookup(expr.name);
      case ExprKind::kList: {
        Json out = Json::array();
        for (const ExprPtr& item : expr.operands)
          out.push_back(to_json(eval(*item), "list literal"));
        return Value::from_json(std::move(out));
      }
      case ExprKind::kDict: {
        Json out = Json::object();
        for (size_t i = 0; i + 1 < expr.operands.size(); i += 2) {
          const Value key = eval(*expr.operands[i]);
          if (!key.is_string()) fail("dict literal keys must be strings, got {}", type_name(key));
          out[key.str()] = to_json(eval(*expr.operands[i + 1]), "dict literal");
        }
        return Value::from_json(std::move(out));
      }
      case ExprKind::kAttribute:
        return get_attribute(eval(*expr.operands[0]), expr.name);
      case ExprKind::kSubscript:
        return get_item(eval(*expr.operands[0]), eval(*expr.operands[1]));
      case ExprKind::kSlice: {
        const Value object = eval(*expr.operands[0]);
        auto bound = [&](size_t i) { return expr.operands[i] ? eval(*expr.operands[i]) : Value(); };
        return get_slice(object, bound(1), bound(2), bound(3));
      }
      case ExprKind::kCall: {
        const Value callee = eval(*expr.operands[0]);
        if (callee.is_undefined()) fail_undefined(callee);
        CallArgs args = eval_arguments(expr, 1);
        return callee.callable().call(args);
      }
      case ExprKind::kFilter:
        return apply_filter_expr(expr, eval(*expr.operands[0]));
      case ExprKind::kTest: {
        const Value operand = eval(*expr.operands[0]);
        CallArgs args = eval_arguments(expr, 1);
        return Value::boolean(apply_test(expr.name, operand, args) != expr.negated);
      }
      case ExprKind::kUnary:
        return apply_unary(expr.unary_op, eval(*expr.operands[0]));
      case ExprKind::kBinary: {
        Value left = eval(*expr.operands[0]);
        if (expr.binary_op == BinaryOp::kAnd) return truthy(left) ? eval(*expr.operands[1]) : left;
        if (expr.binary_op == BinaryOp::kOr) return truthy(left) ? left : eval(*expr.operands[1]);
        return apply_binary(expr.binary_op, left, eval(*expr.operands[1]));
      }
      case ExprKind::kCompare: {
        Value left = eval(*expr.operands[0]);
        for (size_t i = 0; i < expr.compare_ops.size(); ++i) {
          Value right = eval(*expr.operands[i + 1]);
          if (!truthy(apply_binary(expr.compare_ops[i], left, right))) return Value::boolean(false);
          left = std::move(right);
        }
        return Value::boolean(true);
      }
      case ExprKind::kConditional:
        if (truthy(eval(*expr.operands[1]))) return eval(*expr.operands[0]);
        if (expr.operands[2] != nullptr) return eval(*expr.operands[2]);
        return Value::undefined(
            fmt::format("the inline if-expression on line {} evaluated to false and no else "
                        "section was defined.",
                        expr.pos.line));
    }
    return Value();
  }

  std::string_view name_;
  std::string* out_ = nullptr;
  std::shared_ptr<Frame> frame_;
  std::vector<std::weak_ptr<Object>> objects_;
  int macro_depth_ = 0;
};

}  // namespace

std::string render_template(const Body& body, std::string_view template_name, const Json& context) {
  if (!context.is_object()) {
    fail("chat template {}: the render context must be a JSON object, got {}", template_name,
         context.type_name());
  }
  Evaluator evaluator(template_name, context);
  return evaluator.render(body);
}

}  // namespace minimax::jinja
