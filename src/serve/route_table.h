// The routes of `minimax serve`, each written once as one row: its path, its method, whether
// `--api-key` guards it, and the OpenAiService member that answers it. The transport reads the
// method and the key rule from the head alone, before any body byte (HttpRoutes::access);
// OpenAiService::handle calls the row's handler. Adding an endpoint is one row here and one
// handler. The key rule: every route that runs the tokenizer, the chat template, a grammar or the
// model needs the key (all of /v1/, /tokenize, /detokenize); only /health, /metrics and the chat
// page's files are open, since a monitor and a browser loading the page have no key to send.
#pragma once

#include <string_view>

#include "serve/http_server.h"

namespace minimax {

class OpenAiService;

// What a handler gets of its request.
struct RouteCall {
  std::string_view path;
  std::string_view rest;  // a kPrefix route's path after the prefix (a model id, slashes included)
  std::string_view body;
  const ClientAlive& client_alive;
};

using RouteHandler = HttpReply (OpenAiService::*)(const RouteCall& call);

enum class RouteMatch {
  kExact,    // the path is `path`
  kPrefix,   // the path is `path` and something more (a model id, slashes included)
  kWebFile,  // the path names an embedded file of the chat page
};

struct Route {
  RouteMatch match;
  std::string_view path;
  std::string_view method;  // "GET" (HEAD follows it), "POST" or "DELETE"
  RouteHandler handler;
  bool needs_key;
  bool at_once = false;  // RouteAccess::at_once: answered on the event loop
};

// The route that answers `method` on `path`, or nullptr when no row has both (route_access tells
// an unknown path, a 404, from a known path with another method, a 405).
const Route* find_route(std::string_view path, std::string_view method);

// What the transport checks for `path` (HttpRoutes::access): the methods of every row that
// matches it ("GET,DELETE" for /v1/responses/{id}) and their key rule. An unknown path needs the
// key too, so that nothing is open unless the table says so. Rows for one path share a key rule
// (route_table_test.cc checks it).
RouteAccess route_access(std::string_view path);

}  // namespace minimax
