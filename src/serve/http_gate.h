// The checks a request's head passes before any body byte is read (internal to the transport):
// the method against the route's list (405 with Allow) and, on a server started with an API key,
// the key where the route asks for it (401). The routes decide which path needs what
// (RouteAccess, serve/route_table.h); this file only applies it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "serve/http_request.h"
#include "serve/http_server.h"

namespace minimax {

struct GateRefusal {
  int status;
  std::string message;
  std::string extra_headers;  // "Allow: GET\r\n" for a 405
};

// nullopt when `head` may go on to its body and the routes; `api_key` "" checks no key.
std::optional<GateRefusal> check_head(const HttpHead& head, const RouteAccess& access,
                                      std::string_view api_key);

}  // namespace minimax
