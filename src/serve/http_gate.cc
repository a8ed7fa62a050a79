// The method and API-key checks on a request head (serve/http_gate.h), and the key comparisons
// (serve/http_server.h).
#include "serve/http_gate.h"

#include <fmt/format.h>

namespace minimax {
namespace {

// Whether `method` is in the comma-separated `allowed` list; HEAD goes where GET does.
bool method_listed(std::string_view allowed, std::string_view method) {
  while (!allowed.empty()) {
    const size_t comma = allowed.find(',');
    std::string_view item = allowed.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (item == method || (method == "HEAD" && item == "GET")) return true;
    if (comma == std::string_view::npos) break;
    allowed.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

bool bearer_matches(std::string_view authorization, std::string_view api_key) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.substr(0, kBearer.size()) != kBearer) return false;
  return key_matches(authorization.substr(kBearer.size()), api_key);
}

bool key_matches(std::string_view given, std::string_view api_key) {
  unsigned char diff = given.size() == api_key.size() ? 0 : 1;
  for (size_t i = 0; i < api_key.size(); ++i)
    diff |= static_cast<unsigned char>(api_key[i]) ^
            static_cast<unsigned char>(i < given.size() ? given[i] : 0);
  return diff == 0;
}

std::optional<GateRefusal> check_head(const HttpHead& head, const RouteAccess& access,
                                      std::string_view api_key) {
  if (!access.methods.empty() && !method_listed(access.methods, head.method))
    return GateRefusal{405, fmt::format("method {} is not allowed on {}", head.method, head.path),
                       fmt::format("Allow: {}\r\n", access.methods)};
  // OPTIONS never needs the key: a browser's CORS preflight carries none. (The head reader
  // already refused a key header sent twice.)
  if (api_key.empty() || !access.needs_key || head.method == "OPTIONS") return std::nullopt;
  const std::string* authorization = head.header("Authorization");
  const std::string* x_api_key = head.header("x-api-key");  // Anthropic's clients
  if ((authorization != nullptr && bearer_matches(*authorization, api_key)) ||
      (x_api_key != nullptr && key_matches(*x_api_key, api_key)))
    return std::nullopt;
  return GateRefusal{401, "Invalid or missing API key (Authorization: Bearer ... or x-api-key)",
                     ""};
}

}  // namespace minimax
