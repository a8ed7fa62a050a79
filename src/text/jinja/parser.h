// Parses a template into statements: text, {{ output }}, if/elif/else, for/else (with loop
// filter), set (names, tuples, namespace attributes, blocks), macro, break/continue, and
// transformers' {% generation %} marker (its body is rendered in place).
#pragma once

#include <string_view>

#include "text/jinja/ast.h"

namespace minimax::jinja {

Body parse_template(std::string_view source, std::string_view template_name);

}  // namespace minimax::jinja
