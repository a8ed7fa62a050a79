// Formats located template errors.
#include "text/jinja/template_error.h"

#include <fmt/format.h>

namespace minimax::jinja {

void fail_at(std::string_view template_name, SourcePos pos, std::string_view message) {
  throw TemplateError(
      fmt::format("chat template {}:{}:{}: {}", template_name, pos.line, pos.column, message));
}

}  // namespace minimax::jinja
