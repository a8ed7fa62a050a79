// The table of Jinja filters, each following jinja2's filters.py (and transformers' tojson).
#include "text/jinja/filters.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "base/error.h"
#include "text/jinja/access.h"
#include "text/jinja/arguments.h"
#include "text/jinja/methods.h"
#include "text/jinja/operators.h"
#include "text/jinja/predicates.h"
#include "text/jinja/py_format.h"
#include "text/jinja/unicode.h"

namespace minimax::jinja {
namespace {

using FilterFunction = Value (*)(std::string_view name, const Value& operand, CallArgs& args);

Value list_of(const std::vector<Value>& items, std::string_view filter) {
  Json out = Json::array();
  for (const Value& item : items) out.push_back(to_json(item, filter));
  return Value::from_json(std::move(out));
}

// jinja2's make_attrgetter: "a.b.0" looks up a, then b, then index 0, item-first.
Value attribute_path(const Value& item, const std::string& path) {
  Value current = item;
  size_t at = 0;
  while (true) {
    const size_t dot = path.find('.', at);
    const std::string part =
        path.substr(at, dot == std::string::npos ? std::string::npos : dot - at);
    const bool numeric = !part.empty() && std::all_of(part.begin(), part.end(),
                                                      [](char c) { return c >= '0' && c <= '9'; });
    current = get_item(current, numeric ? Value::integer(std::stoll(part)) : Value::string(part));
    if (dot == std::string::npos) return current;
    at = dot + 1;
  }
}

Value sort_key(const Value& item, const std::optional<std::string>& attribute,
               bool case_sensitive) {
  Value key = attribute ? attribute_path(item, *attribute) : item;
  if (!case_sensitive && key.is_string()) return Value::string(lower_string(key.str()));
  return key;
}

Value tojson(std::string_view name, const Value& v, CallArgs& call) {
  BoundArgs args(name, call, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonDumpOptions options;
  options.ensure_ascii = args.flag(0, false);
  if (auto indent = args.int_or_none(1)) options.indent = static_cast<int>(*indent);
  if (args.has(2) && !args.get(2).is_none()) {
    const Value& separators = args.get(2);
    if (!separators.is_list() || separators.size() != 2 || !separators.item(0).is_string() ||
        !separators.item(1).is_string()) {
      fail("tojson(): separators must be a pair of strings");
    }
    options.item_separator = separators.item(0).str();
    options.key_separator = separators.item(1).str();
  }
  options.sort_keys = args.flag(3, false);
  return Value::string(python_json_dumps(to_json(v, "tojson"), options));
}

Value string_filter(std::string_view name, const Value& v, CallArgs& call) {
  if (name == "trim") {
    BoundArgs args(name, call, {"chars"});
    const std::optional<std::string> chars = args.string_or_none(0);
    return Value::string(strip_python(to_str(v), chars ? &*chars : nullptr, true, true));
  }
  if (name == "replace") {
    BoundArgs args(name, call, {"old", "new", "count"});
    CallArgs method_args;
    method_args.positional = {Value::string(to_str(args.get(0))),
                              Value::string(to_str(args.get(1)))};
    if (auto count = args.int_or_none(2)) method_args.positional.push_back(Value::integer(*count));
    return call_method(Value::string(to_str(v)), "replace", method_args);
  }
  BoundArgs args(name, call, {});
  if (name == "string") return Value::string(to_str(v));
  CallArgs none;
  return call_method(Value::string(to_str(v)), name, none);  // lower, upper, capitalize, title
}

Value length(std::string_view name, const Value& v, CallArgs& call) {
  BoundArgs args(name, call, {});
  return Value::integer(static_cast<int64_t>(length_of(v)));
}

Value items(std::string_view name, const Value& v, CallArgs& call) {
  BoundArgs args(name, call, {});
  if (v.is_undefined()) return Value::from_json(Json::array());
  if (!v.is_dict()) fail("Can only get item pairs from a mapping.");
  CallArgs none;
  return call_method(v, "items", none);
}

Value join(std::string_view name, const Value& v, CallArgs& call) {
  BoundArgs args(name, call, {"d", "attribute"});
  const std::string separator = to_str(args.get_or(0, Value::string("")));
  const std::optional<std::string> attribute = args.string_or_none(1);
  std::string out;
  bool first = true;
  for (const Value& item : iterate(v)) {
    if (!first) out += separator;
    first = false;
    out += to_str(attribute ? attribute_path(item, *attribute) : item);
  }
  return Value::string(std::move(out));
}

Value default_filter(std::string_view name, const Value& v, CallArgs& call) {
  BoundArgs args(name, call, {"default_value", "boolean"});
  const bool use_default = v.is_undefined() || (args.flag(1, false) && !truthy(v));
  return use_default ? args.get_or(0, Value::string("")) : v;
}

Value first_or_last(std::string_view name, const Value& v, CallArgs& call) {
  BoundArgs args(name, call, {});
  const std::vector<Value> all = iterate(v);
  if (all.empty()) return Value::undefined(fmt::format("No {} item, sequence was empty.", name));
  return name == "first" ? all.front() : all.back();
}

Value sequence_filter(std::string_view name, const Value& v, CallArgs& call) {
  if (name == "list") {
    BoundArgs args(name, call, {});
    return list_of(iterate(v), name);
  }
  if (name == "reverse") {
    BoundArgs args(name, call, {});
    std::vector<Value> all = iterate(v);
    std::reverse(all.begin(), all.end());
    if (!v.is_string()) return list_of(all, name);
    std::string out;
    for (const Value& c : all) out += c.str();
    return Value::string(std::move(out));
  }
  const bool is_sort = name == "sort";
  BoundArgs args(
      name, call,
      is_sort ? std::initializer_list<std::string_view>{"reverse", "case_sensitive", "attribute"}
              : std::initializer_list<std::string_view>{"case_sensitive", "attribute"});
  const size_t offset = is_sort ? 1 : 0;
  const bool case_sensitive = args.flag(offset, false);
  const std::optional<std::string> attribute = args.string_or_none(offset + 1);
  std::vector<Value> all = iterate(v);
  if (is_sort) {
    std::stable_sort(all.begin(), all.end(), [&](const Value& a, const Value& b) {
      return less_than(sort_key(a, attribute, case_sensitive),
                       sort_key(b, attribute, case_sensitive), BinaryOp::kLt);
    });
    if (args.flag(0, false)) std::reverse(all.begin(), all.end());
    return list_of(all, name);
  }
  std::vector<Value> unique;  // unique: first occurrence of each key
  std::vector<Value> seen;
  for (const Value& item : all) {
    const Value key = sort_key(item, attribute, case_sensitive);
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(s, key); })) {
      seen.push_back(key);
      unique.push_back(item);
    }
  }
  return list_of(unique, name);
}

// select/reject(test, args...) and selectattr/rejectattr(attribute, test, args...).
Value select(std::string_view name, const Value& v, CallArgs& call) {
  if (!call.keyword.empty()) fail("{}() takes no keyword arguments", name);
  const bool by_attribute = name == "selectattr" || name == "rejectattr";
  const bool keep_when = name == "select" || name == "selectattr";
  size_t next = 0;
  std::string attribute;
  if (by_attribute) {
    if (call.positional.empty() || !call.positional[0].is_string()) {
      fail("{}() needs an attribute name", name);
    }
    attribute = call.positional[next++].str();
  }
  std::optional<std::string> test;
  if (next < call.positional.size()) {
    if (!call.positional[next].is_string()) fail("{}() needs a test name", name);
    test = call.positional[next++].str();
    if (!has_test(*test)) fail("no test named '{}'", *test);
  }
  std::vector<Value> kept;
  for (const Value& item : iterate(v)) {
    const Value subject = by_attribute ? attribute_path(item, attribute) : item;
    bool passed = false;
    if (test) {
      CallArgs test_args;
      test_args.positional.assign(call.positional.begin() + static_cast<long>(next),
                                  call.positional.end());
      passed = apply_test(*test, subject, test_args);
    } else {
      passed = truthy(subject);
    }
    if (passed == keep_when) kept.push_back(item);
  }
  return list_of(kept, name);
}

Value map(std::string_view name, const Value& v, CallArgs& call) {
  std::optional<std::string> attribute;
  std::optional<Value> fallback;
  for (const auto& [key, value] : call.keyword) {
    if (key == "attribute" && value.is_string())
      attribute = value.str();
    else if (key == "default")
      fallback = value;
    else
      fail("map() got an unexpected keyword argument '{}'", key);
  }
  std::vector<Value> mapped;
  for (const Value& item : iterate(v)) {
    if (attribute) {
      Value found = attribute_path(item, *attribute);
      if (found.is_undefined() && fallback) found = *fallback;
      mapped.push_back(found);
      continue;
    }
    if (call.positional.empty() || !call.positional[0].is_string()) {
      fail("map() needs a filter name or attribute=");
    }
    CallArgs filter_args;
    filter_args.positional.assign(call.positional.begin() + 1, call.positional.end());
    mapped.push_back(apply_filter(call.positional[0].str(), item, filter_args));
  }
  return list_of(mapped, name);
}

// Python's int()/float() of a string, the whole string (surrounding whitespace allowed).
std::optional<double> parse_number(const std::string& text, bool integer_only) {
  std::string trimmed = strip_python(text, nullptr, true, true);
  trimmed.erase(std::remove(trimmed.begin(), trimmed.end(), '_'), trimmed.end());
  if (trimmed.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double parsed = integer_only ? static_cast<double>(std::strtoll(trimmed.c_str(), &end, 10))
                                     : std::strtod(trimmed.c_str(), &end);
  if (end != trimmed.c_str() + trimmed.size() || errno == ERANGE) return std::nullopt;
  return parsed;
}

Value number_filter(std::string_view name, const Value& v, CallArgs& call) {
  if (name == "abs") {
    BoundArgs args(name, call, {});
    if (v.kind() == Value::Kind::kFloat) return Value::number(std::fabs(v.as_double()));
    if (!v.is_number()) fail("bad operand type for abs(): '{}'", type_name(v));
    return Value::integer(std::llabs(v.as_int()));
  }
  if (name == "float") {
    BoundArgs args(name, call, {"default"});
    if (v.is_number()) return Value::number(v.as_double());
    if (v.is_string()) {
      if (auto parsed = parse_number(v.str(), false)) return Value::number(*parsed);
    }
    return args.get_or(0, Value::number(0.0));
  }
  BoundArgs args(name, call, {"default", "base"});  // int
  if (v.kind() == Value::Kind::kInt || v.kind() == Value::Kind::kBool)
    return Value::integer(v.as_int());
  if (v.kind() == Value::Kind::kFloat && std::isfinite(v.as_double())) {
    return Value::integer(static_cast<int64_t>(std::trunc(v.as_double())));
  }
  if (v.is_string()) {
    if (auto parsed = parse_number(v.str(), true))
      return Value::integer(static_cast<int64_t>(*parsed));
    if (auto parsed = parse_number(v.str(), false); parsed && std::isfinite(*parsed)) {
      return Value::integer(static_cast<int64_t>(std::trunc(*parsed)));  // "42.23" | int is 42
    }
  }
  return args.get_or(0, Value::integer(0));
}

Value safe(std::string_view name, const Value& v, CallArgs& call) {
  BoundArgs args(name, call, {});
  return v;  // no autoescaping in chat templates, so markup-safety is moot
}

struct Filter {
  std::string_view name;
  FilterFunction function;
};

constexpr Filter kFilters[] = {
    {"tojson", tojson},
    {"string", string_filter},
    {"trim", string_filter},
    {"lower", string_filter},
    {"upper", string_filter},
    {"capitalize", string_filter},
    {"title", string_filter},
    {"replace", string_filter},
    {"length", length},
    {"count", length},
    {"items", items},
    {"join", join},
    {"default", default_filter},
    {"d", default_filter},
    {"first", first_or_last},
    {"last", first_or_last},
    {"list", sequence_filter},
    {"reverse", sequence_filter},
    {"sort", sequence_filter},
    {"unique", sequence_filter},
    {"select", select},
    {"reject", select},
    {"selectattr", select},
    {"rejectattr", select},
    {"map", map},
    {"int", number_filter},
    {"float", number_filter},
    {"abs", number_filter},
    {"safe", safe},
};

const Filter* find_filter(std::string_view name) {
  for (const Filter& filter : kFilters) {
    if (filter.name == name) return &filter;
  }
  return nullptr;
}

}  // namespace

bool has_filter(std::string_view name) { return find_filter(name) != nullptr; }

Value apply_filter(std::string_view name, const Value& operand, CallArgs& args) {
  const Filter* filter = find_filter(name);
  if (filter == nullptr) fail("no filter named '{}'", name);
  return filter->function(name, operand, args);
}

}  // namespace minimax::jinja
