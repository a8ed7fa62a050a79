// Test helper: renders a template given as text with a JSON context given as text.
#pragma once

#include <string>

#include "text/jinja/chat_template.h"

namespace minimax::testing_jinja {

inline std::string render(const std::string& source, const std::string& context = "{}") {
  return ChatTemplate(source, "t").render(nlohmann::ordered_json::parse(context));
}

// The message of the Error that rendering (or parsing) throws; "" when nothing is thrown.
std::string render_error(const std::string& source, const std::string& context = "{}");

}  // namespace minimax::testing_jinja
