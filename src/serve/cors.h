// CORS for `minimax serve`, with vLLM's flags: --allowed-origins, --allowed-methods,
// --allowed-headers. Off unless origins are given (vLLM allows every origin by default; a server
// that may hold an API key does not, since any page a user visits could then call it). With an
// allowed Origin, a preflight (OPTIONS with Access-Control-Request-Method) on a route the table
// knows is answered 204 by the transport without the key (browsers never send one on a
// preflight), and every other reply carries Access-Control-Allow-Origin. Another origin gets no
// CORS header at all, which is how a browser is told no. --allow-credentials adds
// Access-Control-Allow-Credentials: true (cookies and HTTP auth of a proxy in front), for listed
// origins only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "serve/http_request.h"

namespace minimax {

struct CorsOptions {
  std::vector<std::string> origins;       // empty: CORS off; "*": any origin
  std::vector<std::string> methods{"*"};  // "*": the route's own methods
  std::vector<std::string> headers{"*"};  // "*": whatever the preflight asks for
  int max_age_seconds = 600;              // how long a browser may cache a preflight's answer
  bool allow_credentials = false;  // Access-Control-Allow-Credentials: true on every CORS reply
  bool enabled() const { return !origins.empty(); }
};

// A flag's list as vLLM takes it (a JSON list, '["http://a.example","http://b.example"]') or
// comma-separated ("http://a.example,http://b.example"); Error naming `flag` for bad JSON or an
// empty item.
std::vector<std::string> parse_cors_list(std::string_view text, std::string_view flag);

// Error for options a browser would refuse or that do nothing: credentials with a "*" origin
// (browsers reject a credentialed reply whose Allow-Origin is "*", and echoing every origin with
// credentials would let any page use the user's cookies), or credentials without origins (CORS
// is off).
void check_cors_options(const CorsOptions& cors);

bool cors_origin_allowed(const CorsOptions& cors, std::string_view origin);

// The header lines every reply to `head` carries: Access-Control-Allow-Origin (and Vary: Origin
// when the answer depends on it) for an allowed Origin, else "".
std::string cors_reply_headers(const CorsOptions& cors, const HttpHead& head);

// When `head` is a CORS preflight from an allowed origin: the header lines of its 204 reply
// (Allow-Origin, Allow-Methods, Allow-Headers, Max-Age). `route_methods` is the route's list
// ("POST", "GET"). nullopt for anything else (the request goes on as it would without CORS).
std::optional<std::string> cors_preflight_headers(const CorsOptions& cors, const HttpHead& head,
                                                  std::string_view route_methods);

}  // namespace minimax
