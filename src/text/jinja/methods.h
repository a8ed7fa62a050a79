// The Python methods of str, dict and list that chat templates call (`content.split('</think>')`,
// `message.get('x')`, `d.items()`), returned as bound callables by attribute access.
#pragma once

#include <string_view>

#include "text/jinja/value.h"

namespace minimax::jinja {

enum class MethodAccess { kNone, kSafe, kUnsafe };

// Whether `self.name` is a method, and whether the immutable sandbox allows it.
MethodAccess method_access(const Value& self, std::string_view name);
Value call_method(const Value& self, std::string_view name, CallArgs& args);

// Python str.split / str.rsplit (sep absent: runs of whitespace).
Value split_string(std::string_view text, const std::string* sep, int64_t max_split,
                   bool from_right);

}  // namespace minimax::jinja
