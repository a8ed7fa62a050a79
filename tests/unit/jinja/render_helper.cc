// Test helper implementation.
#include "render_helper.h"

#include "base/error.h"

namespace minimax::testing_jinja {

std::string render_error(const std::string& source, const std::string& context) {
  try {
    render(source, context);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace minimax::testing_jinja
