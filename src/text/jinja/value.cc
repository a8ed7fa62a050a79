// Value construction and Python's truthiness, equality, str() and repr() over it.
#include "text/jinja/value.h"

#include <fmt/format.h>

#include "base/error.h"
#include "text/jinja/py_format.h"

namespace minimax::jinja {

const Value* Object::find(std::string_view name) const {
  for (const auto& [key, value] : attributes) {
    if (key == name) return &value;
  }
  return nullptr;
}

void Object::set(std::string name, Value value) {
  for (auto& [key, existing] : attributes) {
    if (key == name) {
      existing = std::move(value);
      return;
    }
  }
  attributes.emplace_back(std::move(name), std::move(value));
}

Value Value::undefined(std::string reason) {
  Value v;
  v.reason_ = std::make_shared<const std::string>(std::move(reason));
  return v;
}

Value Value::from_json(Json json) { return ref(std::make_shared<const Json>(std::move(json))); }

Value Value::ref(std::shared_ptr<const Json> json) {
  Value v;
  switch (json->type()) {
    case Json::value_t::null:
      v.kind_ = Kind::kNone;
      break;
    case Json::value_t::boolean:
      v.kind_ = Kind::kBool;
      break;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      v.kind_ = Kind::kInt;
      break;
    case Json::value_t::number_float:
      v.kind_ = Kind::kFloat;
      break;
    case Json::value_t::string:
      v.kind_ = Kind::kString;
      break;
    case Json::value_t::array:
      v.kind_ = Kind::kList;
      break;
    case Json::value_t::object:
      v.kind_ = Kind::kDict;
      break;
    case Json::value_t::binary:
    case Json::value_t::discarded:
      fail("a binary or discarded JSON value cannot be used in a template");
  }
  v.json_ = std::move(json);
  return v;
}

Value Value::none() { return from_json(Json(nullptr)); }
Value Value::boolean(bool value) { return from_json(Json(value)); }
Value Value::integer(int64_t value) { return from_json(Json(value)); }
Value Value::number(double value) { return from_json(Json(value)); }
Value Value::string(std::string value) { return from_json(Json(std::move(value))); }

Value Value::object(std::shared_ptr<Object> object) {
  Value v;
  v.kind_ = Kind::kObject;
  v.object_ = std::move(object);
  return v;
}

Value Value::callable(std::string name, std::function<Value(CallArgs&)> call) {
  Value v;
  v.kind_ = Kind::kCallable;
  v.callable_ = std::make_shared<const Callable>(Callable{std::move(name), std::move(call)});
  return v;
}

const Json& Value::json() const {
  if (json_ == nullptr) fail("expected data, got {}", type_name(*this));
  return *json_;
}

const std::string& Value::str() const { return json().get_ref<const std::string&>(); }

int64_t Value::as_int() const {
  if (kind_ == Kind::kBool) return json_->get<bool>() ? 1 : 0;
  if (json_->is_number_unsigned() && json_->get<uint64_t>() > INT64_MAX) {
    fail("integer {} is too large for the template interpreter", json_->get<uint64_t>());
  }
  return json_->get<int64_t>();
}

double Value::as_double() const {
  if (kind_ == Kind::kFloat) return json_->get<double>();
  if (kind_ == Kind::kInt && json_->is_number_unsigned()) {
    return static_cast<double>(json_->get<uint64_t>());
  }
  return static_cast<double>(as_int());
}

Object& Value::object() const {
  if (object_ == nullptr) fail("expected an object, got {}", type_name(*this));
  return *object_;
}

const Callable& Value::callable() const {
  if (callable_ == nullptr) fail("'{}' object is not callable", type_name(*this));
  return *callable_;
}

std::string Value::undefined_reason() const {
  return reason_ != nullptr ? *reason_ : std::string("undefined value");
}

size_t Value::size() const { return json().size(); }

Value Value::item(size_t index) const {
  return ref(std::shared_ptr<const Json>(json_, &(*json_)[index]));
}

Value Value::member(const std::string& key) const {
  auto it = json_->find(key);
  if (it == json_->end()) {
    return undefined(fmt::format("'{}' has no attribute '{}'", object_description(*this), key));
  }
  return ref(std::shared_ptr<const Json>(json_, &*it));
}

bool Value::has_member(const std::string& key) const { return json_->contains(key); }

bool truthy(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone:
      return false;
    case Value::Kind::kBool:
      return value.json().get<bool>();
    case Value::Kind::kInt:
      return value.as_int() != 0;
    case Value::Kind::kFloat:
      return value.as_double() != 0.0;
    case Value::Kind::kString:
      return !value.str().empty();
    case Value::Kind::kList:
    case Value::Kind::kDict:
      return value.size() > 0;
    case Value::Kind::kObject:
    case Value::Kind::kCallable:
      return true;
  }
  return false;
}

bool equal(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  if (a.is_number() && b.is_number()) {
    if (a.kind() == Kind::kFloat || b.kind() == Kind::kFloat) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kUndefined:
    case Kind::kNone:
      return true;
    case Kind::kString:
      return a.str() == b.str();
    case Kind::kList: {
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!equal(a.item(i), b.item(i))) return false;
      }
      return true;
    }
    case Kind::kDict: {
      if (a.size() != b.size()) return false;
      for (auto it = a.json().begin(); it != a.json().end(); ++it) {
        if (!b.has_member(it.key()) || !equal(a.member(it.key()), b.member(it.key()))) {
          return false;
        }
      }
      return true;
    }
    case Kind::kObject:
      return &a.object() == &b.object();
    case Kind::kCallable:
      return &a.callable() == &b.callable();
    case Kind::kBool:
    case Kind::kInt:
    case Kind::kFloat:
      break;  // handled above
  }
  return false;
}

std::string to_str(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined:
      return "";
    case Value::Kind::kString:
      return value.str();
    case Value::Kind::kObject: {
      const Object& object = value.object();
      if (object.assignable) {  // jinja2 prints a namespace as <Namespace {'key': value}>
        std::string out = "<Namespace {";
        for (size_t i = 0; i < object.attributes.size(); ++i) {
          if (i > 0) out += ", ";
          out += python_string_repr(object.attributes[i].first) + ": " +
                 to_repr(object.attributes[i].second);
        }
        return out + "}>";
      }
      return "<" + object.type_name + ">";
    }
    case Value::Kind::kCallable:
      return "<function " + value.callable().name + ">";
    case Value::Kind::kNone:
    case Value::Kind::kBool:
    case Value::Kind::kInt:
    case Value::Kind::kFloat:
    case Value::Kind::kList:
    case Value::Kind::kDict:
      return python_repr(value.json());
  }
  return "";
}

std::string to_repr(const Value& value) {
  if (value.is_undefined()) return "Undefined";
  if (value.is_data()) return python_repr(value.json());
  return to_str(value);
}

std::string type_name(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined:
      return "Undefined";
    case Value::Kind::kNone:
      return "NoneType";
    case Value::Kind::kBool:
      return "bool";
    case Value::Kind::kInt:
      return "int";
    case Value::Kind::kFloat:
      return "float";
    case Value::Kind::kString:
      return "str";
    case Value::Kind::kList:
      return "list";
    case Value::Kind::kDict:
      return "dict";
    case Value::Kind::kObject:
      return value.object().type_name;
    case Value::Kind::kCallable:
      return "function";
  }
  return "?";
}

std::string object_description(const Value& value) {
  if (value.is_none()) return "None";
  if (value.kind() == Value::Kind::kObject) {
    return (value.object().assignable ? "jinja2.utils." : "jinja2.runtime.") +
           value.object().type_name + " object";
  }
  return type_name(value) + " object";
}

Json to_json(const Value& value, std::string_view what) {
  if (value.is_data()) return value.json();
  if (value.is_undefined()) {
    fail("{}: Object of type Undefined is not JSON serializable ({})", what,
         value.undefined_reason());
  }
  fail("{}: Object of type {} is not JSON serializable", what, type_name(value));
}

void fail_undefined(const Value& value) { fail("{}", value.undefined_reason()); }

}  // namespace minimax::jinja
