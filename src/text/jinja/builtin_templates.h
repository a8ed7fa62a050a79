// Chat templates compiled into the binary from templates/*.jinja (see cmake/embed_templates.cmake):
// "minimax_m2" is MiniMax's official M2 template; "minimax_m3" the M3 layout (docs/text.md).
#pragma once

#include <optional>
#include <string_view>

namespace minimax {

std::optional<std::string_view> builtin_chat_template(std::string_view name);

}  // namespace minimax
