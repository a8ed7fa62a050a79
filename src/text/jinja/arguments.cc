// Python-style argument binding.
#include "text/jinja/arguments.h"

#include "base/error.h"

namespace minimax::jinja {

BoundArgs::BoundArgs(std::string_view function, const CallArgs& args,
                     std::initializer_list<std::string_view> params, bool allow_extra)
    : function_(function), names_(params), values_(params.size()) {
  for (size_t i = 0; i < args.positional.size(); ++i) {
    if (i < values_.size()) {
      values_[i] = args.positional[i];
    } else if (allow_extra) {
      extra_.push_back(args.positional[i]);
    } else {
      fail("{}() takes at most {} argument(s) ({} given)", function_, values_.size(),
           args.positional.size());
    }
  }
  for (const auto& [key, value] : args.keyword) {
    size_t index = 0;
    while (index < names_.size() && names_[index] != key) ++index;
    if (index == names_.size())
      fail("{}() got an unexpected keyword argument '{}'", function_, key);
    if (values_[index].has_value()) {
      fail("{}() got multiple values for argument '{}'", function_, key);
    }
    values_[index] = value;
  }
}

const Value& BoundArgs::get(size_t index) const {
  if (!values_[index].has_value()) {
    fail("{}() missing required argument '{}'", function_, names_[index]);
  }
  return *values_[index];
}

std::optional<std::string> BoundArgs::string_or_none(size_t index) const {
  if (!has(index) || values_[index]->is_none()) return std::nullopt;
  if (!values_[index]->is_string()) {
    fail("{}() argument '{}' must be a string, not {}", function_, names_[index],
         type_name(*values_[index]));
  }
  return values_[index]->str();
}

std::optional<int64_t> BoundArgs::int_or_none(size_t index) const {
  if (!has(index) || values_[index]->is_none()) return std::nullopt;
  const Value& v = *values_[index];
  if (v.kind() != Value::Kind::kInt && v.kind() != Value::Kind::kBool) {
    fail("{}() argument '{}' must be an integer, not {}", function_, names_[index], type_name(v));
  }
  return v.as_int();
}

bool BoundArgs::flag(size_t index, bool fallback) const {
  return has(index) ? truthy(*values_[index]) : fallback;
}

}  // namespace minimax::jinja
