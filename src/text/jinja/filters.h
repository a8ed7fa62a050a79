// Jinja filters (`value | name(args)`) that chat templates use, with jinja2's behaviour and
// transformers' tojson (json.dumps with ensure_ascii=False, key order kept).
#pragma once

#include <string_view>

#include "text/jinja/value.h"

namespace minimax::jinja {

bool has_filter(std::string_view name);
Value apply_filter(std::string_view name, const Value& operand, CallArgs& args);

}  // namespace minimax::jinja
