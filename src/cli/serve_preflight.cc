#include "cli/serve_preflight.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "kernels/backend.h"

namespace minimax::cli {

ReasoningChoice parse_reasoning_choice(const std::string& name, std::string_view auto_name) {
  ReasoningChoice choice;
  if (name == "none") {
    choice.parse = false;
    return choice;
  }
  if (name == kAppendThinkParser) {
    choice.parse = false;
    choice.append_think = true;
    return choice;
  }
  const std::string_view chosen = name == "auto" ? auto_name : std::string_view(name);
  try {
    choice.format = parse_parser_format(chosen, "--reasoning-parser");
  } catch (const Error&) {
    fail(
        "--reasoning-parser: unknown parser '{}' (expected auto, none, minimax_m2, minimax_m3 "
        "or {})",
        name, kAppendThinkParser);
  }
  return choice;
}

void check_backend_built(const std::string& name) {
  std::string built;
  for (const BackendEntry& e : registered_backends()) {
    if (e.name == name) {
      // A GPU backend is only as good as the device it finds: say now, not after the load.
      if (e.kind == BackendKind::kCuda) e.create(BackendOptions{});
      return;
    }
    built += (built.empty() ? "" : ", ") + std::string(e.name);
  }
  if (name == "cuda")
    fail(
        "--backend cuda: not built into this binary (it has {}); it is built where CMake finds "
        "nvcc (docs/cuda.md), so this recipe cannot run here",
        built);
  fail("--backend: unknown kernel backend '{}' (this binary has {})", name, built);
}

bool is_loopback_host(std::string_view host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

bool is_placeholder_api_key(std::string_view key) {
  std::string k;
  for (const char c : key) k += c == '_' ? '-' : static_cast<char>(std::tolower(c));
  static constexpr std::string_view kPlaceholders[] = {
      "change-me",    "changeme", "your-api-key", "your-key", "api-key",   "empty",     "sk-xxx",
      "token-abc123", "secret",   "password",     "xxx",      "<api-key>", "replace-me"};
  return std::find(std::begin(kPlaceholders), std::end(kPlaceholders), k) !=
         std::end(kPlaceholders);
}

std::string check_api_key(std::string_view key, std::string_view host) {
  const bool open = !is_loopback_host(host);
  if (is_placeholder_api_key(key)) {
    if (open)
      fail(
          "--api-key '{}' is a placeholder, and --host {} lets other machines in: anyone who "
          "has read the recipe could call this server; set a key of your own (--api-key or "
          "MINIMAX_API_KEY)",
          key, host);
    return fmt::format(
        "--api-key '{}' is a placeholder; set a key of your own before serving on "
        "an address other machines reach",
        key);
  }
  if (key.empty() && open)
    return fmt::format(
        "serving on {} without an API key: any machine that reaches it may call "
        "it (--api-key or MINIMAX_API_KEY)",
        host);
  return "";
}

}  // namespace minimax::cli
