// The route table of `minimax serve` (serve/route_table.h).
#include "serve/route_table.h"

#include "serve/openai_service.h"
#include "serve/web_assets.h"

namespace minimax {
namespace {

// {match, path, method, handler, needs_key[, at_once]}, looked up in order: the API's paths
// before the chat page's files.
constexpr Route kRoutes[] = {
    {RouteMatch::kExact, "/health", "GET", &OpenAiService::health, false, /*at_once=*/true},
    {RouteMatch::kExact, "/metrics", "GET", &OpenAiService::metrics, false, /*at_once=*/true},
    {RouteMatch::kExact, "/v1/models", "GET", &OpenAiService::models, true},
    {RouteMatch::kPrefix, "/v1/models/", "GET", &OpenAiService::model, true},
    {RouteMatch::kExact, "/v1/chat/completions", "POST", &OpenAiService::chat_completions, true},
    {RouteMatch::kExact, "/v1/completions", "POST", &OpenAiService::completions, true},
    {RouteMatch::kExact, "/v1/responses", "POST", &OpenAiService::responses, true},
    {RouteMatch::kPrefix, "/v1/responses/", "GET", &OpenAiService::retrieve_response, true},
    {RouteMatch::kPrefix, "/v1/responses/", "DELETE", &OpenAiService::delete_response, true},
    {RouteMatch::kExact, "/v1/messages", "POST", &OpenAiService::messages, true},
    {RouteMatch::kExact, "/v1/messages/count_tokens", "POST", &OpenAiService::count_message_tokens,
     true},
    // vLLM leaves these open (its key covers /v1 only), but /tokenize renders the chat template
    // and compiles response_format and tool grammars, as costly as a chat request, and both run
    // the tokenizer on whatever they are sent.
    {RouteMatch::kExact, "/tokenize", "POST", &OpenAiService::tokenize, true},
    {RouteMatch::kExact, "/detokenize", "POST", &OpenAiService::detokenize, true},
    {RouteMatch::kWebFile, "", "GET", &OpenAiService::web_file, false},
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

const Route* find_route(std::string_view path, std::string_view method) {
  for (const Route& route : kRoutes)
    if (route.method == method && matches(route, path)) return &route;
  return nullptr;
}

RouteAccess route_access(std::string_view path) {
  RouteAccess access;
  for (const Route& route : kRoutes) {
    if (!matches(route, path)) continue;
    if (!access.methods.empty()) access.methods += ",";
    access.methods += route.method;
    access.needs_key = route.needs_key;
    access.at_once = route.at_once;
  }
  return access;
}

}  // namespace minimax
