// Executes a parsed template against a context with jinja2's scoping: `set` inside a for loop
// (or a macro) stays in that loop iteration (or call); namespaces carry values out; macros see the
// scope they were defined in.
#pragma once

#include <string>
#include <string_view>

#include "text/jinja/ast.h"

namespace minimax::jinja {

// `context` must be a JSON object; its members are the template's top-level variables. It is read
// in place (not copied) and must outlive the call. As in transformers, `tools` and `documents` are
// none and `add_generation_prompt` false when the context leaves them out.
std::string render_template(const Body& body, std::string_view template_name, const Json& context);

}  // namespace minimax::jinja
