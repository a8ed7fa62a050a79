// ChatTemplate: parse once, render many times.
#include "text/jinja/chat_template.h"

#include <algorithm>

#include "base/error.h"
#include "text/jinja/evaluator.h"
#include "text/jinja/globals.h"
#include "text/jinja/parser.h"

namespace minimax {

ChatTemplate::ChatTemplate(std::string source, std::string name)
    : source_(std::move(source)), name_(std::move(name)) {
  body_ = std::make_shared<const jinja::Body>(jinja::parse_template(source_, name_));
}

std::string ChatTemplate::render(const nlohmann::ordered_json& context) const {
  if (!context.is_object()) {
    fail("chat template {}: the render context must be a JSON object, got {}", name_,
         context.type_name());
  }
  return jinja::render_template(*body_, name_, context);
}

bool ChatTemplate::is_builtin(std::string_view name) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& global : jinja::make_globals([](const std::shared_ptr<jinja::Object>&) {}))
      out.push_back(global.first);
    return out;
  }();
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace minimax
