// Binds call arguments to named parameters the way Python does (positional first, then keywords),
// for filters, tests, methods and globals; wrong calls fail with Python's wording.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/jinja/value.h"

namespace minimax::jinja {

class BoundArgs {
 public:
  // `function` names the callee in messages; `params` are its parameter names in order. Positional
  // arguments beyond the named parameters are kept as extras only when allow_extra is set.
  BoundArgs(std::string_view function, const CallArgs& args,
            std::initializer_list<std::string_view> params, bool allow_extra = false);

  bool has(size_t index) const { return values_[index].has_value(); }
  const Value& get(size_t index) const;  // fails when the argument was not given
  Value get_or(size_t index, Value fallback) const {
    return has(index) ? *values_[index] : std::move(fallback);
  }
  // Argument `index` as an optional string / integer / bool, failing on any other type.
  std::optional<std::string> string_or_none(size_t index) const;
  std::optional<int64_t> int_or_none(size_t index) const;
  bool flag(size_t index, bool fallback) const;
  const std::vector<Value>& extra() const { return extra_; }

 private:
  std::string function_;
  std::vector<std::string_view> names_;
  std::vector<std::optional<Value>> values_;
  std::vector<Value> extra_;
};

}  // namespace minimax::jinja
