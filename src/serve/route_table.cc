// The route table of `minimax serve` (serve/route_table.h).
#include "serve/route_table.h"

#include "serve/web_assets.h"

namespace minimax {
namespace {

// Looked up in order: the API's paths before the chat page's files.
constexpr Route kRoutes[] = {
    {RouteId::kHealth, RouteMatch::kExact, "/health", "GET", false, /*at_once=*/true},
    {RouteId::kMetrics, RouteMatch::kExact, "/metrics", "GET", false, /*at_once=*/true},
    {RouteId::kModels, RouteMatch::kExact, "/v1/models", "GET", true},
    {RouteId::kModel, RouteMatch::kPrefix, "/v1/models/", "GET", true},
    {RouteId::kChatCompletions, RouteMatch::kExact, "/v1/chat/completions", "POST", true},
    {RouteId::kCompletions, RouteMatch::kExact, "/v1/completions", "POST", true},
    {RouteId::kMessages, RouteMatch::kExact, "/v1/messages", "POST", true},
    {RouteId::kCountTokens, RouteMatch::kExact, "/v1/messages/count_tokens", "POST", true},
    // vLLM leaves these open (its key covers /v1 only), but /tokenize renders the chat template
    // and compiles response_format and tool grammars, as costly as a chat request, and both run
    // the tokenizer on whatever they are sent.
    {RouteId::kTokenize, RouteMatch::kExact, "/tokenize", "POST", true},
    {RouteId::kDetokenize, RouteMatch::kExact, "/detokenize", "POST", true},
    {RouteId::kWebFile, RouteMatch::kWebFile, "", "GET", false},
};

bool matches(const Route& route, std::string_view path) {
  switch (route.match) {
    case RouteMatch::kExact:
      return path == route.path;
    case RouteMatch::kPrefix:
      return path.size() > route.path.size() && path.starts_with(route.path);
    case RouteMatch::kWebFile:
      return find_web_file(path) != nullptr;
  }
  return false;
}

}  // namespace

const Route* find_route(std::string_view path) {
  for (const Route& route : kRoutes)
    if (matches(route, path)) return &route;
  return nullptr;
}

RouteAccess route_access(std::string_view path) {
  const Route* route = find_route(path);
  if (route == nullptr) return RouteAccess{};
  return RouteAccess{std::string(route->method), route->needs_key, route->at_once};
}

}  // namespace minimax
