// Jinja tests (`value is name(args)`): defined, none, string, mapping, iterable, number, ...
#pragma once

#include <string_view>

#include "text/jinja/value.h"

namespace minimax::jinja {

bool has_test(std::string_view name);
bool apply_test(std::string_view name, const Value& operand, CallArgs& args);

}  // namespace minimax::jinja
