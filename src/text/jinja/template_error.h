// Where a template problem is and how it is reported: every syntax or render error names the
// template and the line:column of the construct at fault.
#pragma once

#include <string>
#include <string_view>

#include "base/error.h"

namespace minimax::jinja {

struct SourcePos {
  int line = 1;    // 1-based
  int column = 1;  // 1-based, in code points
};

// An Error whose message already carries "chat template NAME:LINE:COL: ".
class TemplateError : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void fail_at(std::string_view template_name, SourcePos pos, std::string_view message);

}  // namespace minimax::jinja
