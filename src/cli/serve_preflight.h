// Checks `serve` runs before any weight is read, shared by a real start and `serve --dry-run`
// (issue 39: `--dry-run` used to accept `backend: cuda`, a missing model and `api-key: change-me`
// on 0.0.0.0): the reasoning parser's name, whether the backend is built into this binary, and
// whether an API key is a placeholder copied from a recipe.
#pragma once

#include <string>
#include <string_view>

#include "serve/parser_format.h"

namespace minimax::cli {

// What --reasoning-parser NAME asks for: "auto" (the architecture's), "none", a format, or
// vLLM's minimax_m2_append_think (M2's format, no split, the opening <think> kept in content).
struct ReasoningChoice {
  bool parse = true;
  bool append_think = false;
  ParserFormat format = ParserFormat::kMinimaxM2;
};
ReasoningChoice parse_reasoning_choice(const std::string& name, std::string_view auto_name);
// The names --reasoning-parser accepts besides auto and none, for --help and errors.
inline constexpr std::string_view kAppendThinkParser = "minimax_m2_append_think";

// Error naming --backend unless `name` is a backend this binary was built with; a known backend
// that is not built (cuda) says so.
void check_backend_built(const std::string& name);

bool is_loopback_host(std::string_view host);
// "change-me", "your-api-key", "EMPTY", "sk-xxx", ...: values recipes and guides write to be
// replaced. Case-insensitive, '-' and '_' alike.
bool is_placeholder_api_key(std::string_view key);
// Error when `key` is a placeholder and `host` is reachable from other machines; a warning line
// (or "") otherwise, also for no key on such a host.
std::string check_api_key(std::string_view key, std::string_view host);

}  // namespace minimax::cli
