// Runtime values of the Jinja interpreter. Data (none, booleans, numbers, strings, lists, dicts)
// is JSON held by shared pointer, and an element of a list or dict aliases its parent, so walking
// `messages` never copies a message. Beside data: jinja's Undefined, attribute objects (namespace()
// and the `loop` variable) and callables (macros, globals, bound string/dict methods).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minimax::jinja {

using Json = nlohmann::ordered_json;
class Value;

// Arguments of a call: positional first, then name=value pairs, as written.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

struct Callable {
  std::string name;
  std::function<Value(CallArgs&)> call;
};

// An attribute bag: jinja's Namespace (assignable with `set ns.x = ...`) or the read-only loop
// context. Insertion-ordered so that printing it is deterministic.
struct Object {
  std::string type_name;  // as jinja2 names the Python class in messages
  bool assignable = false;
  std::vector<std::pair<std::string, Value>> attributes;

  const Value* find(std::string_view name) const;
  void set(std::string name, Value value);
};

class Value {
 public:
  enum class Kind {
    kUndefined,
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kList,
    kDict,
    kObject,
    kCallable
  };

  Value() = default;  // undefined, without a reason
  static Value undefined(std::string reason);
  static Value from_json(Json json);
  static Value ref(std::shared_ptr<const Json> json);  // shares, does not copy
  static Value none();
  static Value boolean(bool value);
  static Value integer(int64_t value);
  static Value number(double value);
  static Value string(std::string value);
  static Value object(std::shared_ptr<Object> object);
  static Value callable(std::string name, std::function<Value(CallArgs&)> call);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_number() const {
    return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool;
  }
  bool is_data() const { return json_ != nullptr; }

  // Data kinds only (fails otherwise).
  const Json& json() const;
  const std::shared_ptr<const Json>& shared_json() const { return json_; }
  const std::string& str() const;  // kString
  int64_t as_int() const;          // kInt or kBool
  double as_double() const;        // any number
  Object& object() const;          // kObject
  const Callable& callable() const;
  // Why this value is undefined, in jinja2's words ("'x' is undefined").
  std::string undefined_reason() const;

  // Elements of a list and members of a dict, aliasing this value's JSON.
  size_t size() const;  // list or dict
  Value item(size_t index) const;
  Value member(const std::string& key) const;  // undefined when absent
  bool has_member(const std::string& key) const;

 private:
  Kind kind_ = Kind::kUndefined;
  std::shared_ptr<const Json> json_;
  std::shared_ptr<Object> object_;
  std::shared_ptr<const Callable> callable_;
  std::shared_ptr<const std::string> reason_;
};

// Python truthiness.
bool truthy(const Value& value);
// Python ==, with jinja2's Undefined == Undefined.
bool equal(const Value& a, const Value& b);
// Python str() (Undefined prints as "").
std::string to_str(const Value& value);
// Python repr().
std::string to_repr(const Value& value);
// The Python type name ("int", "str", "NoneType", ...) for messages.
std::string type_name(const Value& value);
// How jinja2 names an object in "'X' has no attribute" messages ("dict object", "None").
std::string object_description(const Value& value);
// The value as JSON, for building lists and for tojson; fails for undefined, objects, callables.
Json to_json(const Value& value, std::string_view what);
// Throws the error jinja2 raises when an Undefined is used for more than printing or testing.
[[noreturn]] void fail_undefined(const Value& value);

}  // namespace minimax::jinja
