// Attribute, item and slice access with jinja2 sandbox semantics.
#include "text/jinja/access.h"

#include <fmt/format.h>

#include <optional>

#include "base/error.h"
#include "text/jinja/methods.h"
#include "text/jinja/unicode.h"

namespace minimax::jinja {
namespace {

Value missing_attribute(const Value& object, const std::string& name) {
  return Value::undefined(
      fmt::format("'{}' has no attribute '{}'", object_description(object), name));
}

Value missing_element(const Value& object, const Value& key) {
  if (key.is_string()) return missing_attribute(object, key.str());
  return Value::undefined(
      fmt::format("'{}' has no element {}", object_description(object), to_repr(key)));
}

// A Python attribute (a method) of str/dict/list, or nothing.
std::optional<Value> method_attribute(const Value& object, const std::string& name) {
  switch (method_access(object, name)) {
    case MethodAccess::kNone:
      return std::nullopt;
    case MethodAccess::kUnsafe:
      return Value::undefined(fmt::format("access to attribute '{}' of '{}' object is unsafe.",
                                          name, type_name(object)));
    case MethodAccess::kSafe:
      return Value::callable(
          name, [object, name](CallArgs& args) { return call_method(object, name, args); });
  }
  return std::nullopt;
}

bool is_index(const Value& key) {
  return key.kind() == Value::Kind::kInt || key.kind() == Value::Kind::kBool;
}

// Python's slice index normalisation (PySlice_AdjustIndices).
int64_t slice_bound(const Value& bound, int64_t length, int64_t step, bool is_start) {
  if (bound.is_undefined() || bound.is_none()) {
    if (step > 0) return is_start ? 0 : length;
    return is_start ? length - 1 : -1;
  }
  if (!is_index(bound)) {
    fail("slice indices must be integers or None, not {}", type_name(bound));
  }
  int64_t index = bound.as_int();
  if (index < 0) {
    index += length;
    if (index < 0) index = step < 0 ? -1 : 0;
  } else if (index >= length) {
    index = step < 0 ? length - 1 : length;
  }
  return index;
}

}  // namespace

Value get_attribute(const Value& object, const std::string& name) {
  switch (object.kind()) {
    case Value::Kind::kUndefined:
      fail_undefined(object);
    case Value::Kind::kDict:
    case Value::Kind::kList:
    case Value::Kind::kString: {
      if (auto method = method_attribute(object, name)) return *method;
      if (object.is_dict()) return object.member(name);
      return missing_attribute(object, name);
    }
    case Value::Kind::kObject: {
      const Value* found = object.object().find(name);
      return found != nullptr ? *found : missing_attribute(object, name);
    }
    case Value::Kind::kNone:
    case Value::Kind::kBool:
    case Value::Kind::kInt:
    case Value::Kind::kFloat:
    case Value::Kind::kCallable:
      break;
  }
  return missing_attribute(object, name);
}

Value get_item(const Value& object, const Value& key) {
  if (object.is_undefined()) fail_undefined(object);
  if (object.is_dict() && key.is_string() && object.has_member(key.str())) {
    return object.member(key.str());
  }
  if ((object.is_list() || object.is_string()) && is_index(key)) {
    const int64_t length = static_cast<int64_t>(length_of(object));
    int64_t index = key.as_int();
    if (index < 0) index += length;
    if (index < 0 || index >= length) return missing_element(object, key);
    if (object.is_list()) return object.item(static_cast<size_t>(index));
    const std::vector<char32_t> cps = decode_utf8(object.str());
    return Value::string(
        encode_utf8(cps, static_cast<size_t>(index), static_cast<size_t>(index) + 1));
  }
  if (key.is_string()) {  // jinja2 falls back to the attribute of that name
    if (object.kind() == Value::Kind::kObject) return get_attribute(object, key.str());
    if (object.is_dict() || object.is_list() || object.is_string()) {
      if (auto method = method_attribute(object, key.str())) return *method;
    }
  }
  return missing_element(object, key);
}

Value get_slice(const Value& object, const Value& start, const Value& stop, const Value& step) {
  if (object.is_undefined()) fail_undefined(object);
  if (!object.is_list() && !object.is_string()) {
    fail("'{}' object is not subscriptable", type_name(object));
  }
  int64_t stride = 1;
  if (!step.is_undefined() && !step.is_none()) {
    if (!is_index(step)) fail("slice indices must be integers or None, not {}", type_name(step));
    stride = step.as_int();
    if (stride == 0) fail("slice step cannot be zero");
  }
  const int64_t length = static_cast<int64_t>(length_of(object));
  const int64_t begin = slice_bound(start, length, stride, true);
  const int64_t end = slice_bound(stop, length, stride, false);
  std::vector<size_t> picked;
  for (int64_t i = begin; stride > 0 ? i < end : i > end; i += stride) {
    picked.push_back(static_cast<size_t>(i));
  }
  if (object.is_string()) {
    const std::vector<char32_t> cps = decode_utf8(object.str());
    std::string out;
    for (size_t i : picked) append_utf8(out, cps[i]);
    return Value::string(std::move(out));
  }
  Json out = Json::array();
  for (size_t i : picked) out.push_back(object.json()[i]);
  return Value::from_json(std::move(out));
}

std::vector<Value> iterate(const Value& value) {
  std::vector<Value> items;
  switch (value.kind()) {
    case Value::Kind::kUndefined:
      return items;
    case Value::Kind::kList:
      items.reserve(value.size());
      for (size_t i = 0; i < value.size(); ++i) items.push_back(value.item(i));
      return items;
    case Value::Kind::kDict:
      for (auto it = value.json().begin(); it != value.json().end(); ++it) {
        items.push_back(Value::string(it.key()));
      }
      return items;
    case Value::Kind::kString:
      for (char32_t c : decode_utf8(value.str())) {
        std::string one;
        append_utf8(one, c);
        items.push_back(Value::string(std::move(one)));
      }
      return items;
    case Value::Kind::kNone:
    case Value::Kind::kBool:
    case Value::Kind::kInt:
    case Value::Kind::kFloat:
    case Value::Kind::kObject:
    case Value::Kind::kCallable:
      break;
  }
  fail("'{}' object is not iterable", type_name(value));
}

size_t length_of(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined:
      return 0;
    case Value::Kind::kString:
      return count_code_points(value.str());
    case Value::Kind::kList:
    case Value::Kind::kDict:
      return value.size();
    default:
      break;
  }
  fail("object of type '{}' has no len()", type_name(value));
}

}  // namespace minimax::jinja
