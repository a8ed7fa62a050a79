// CORS decisions (serve/cors.h).
#include "serve/cors.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace minimax {
namespace {

bool has_star(const std::vector<std::string>& list) {
  return std::find(list.begin(), list.end(), "*") != list.end();
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// The route's methods for a preflight: its own, HEAD beside GET, and OPTIONS itself.
std::string route_methods_for_preflight(std::string_view route_methods) {
  std::vector<std::string> methods;
  while (!route_methods.empty()) {
    const size_t comma = route_methods.find(',');
    const std::string item = trimmed(route_methods.substr(0, comma));
    if (!item.empty()) methods.push_back(item);
    if (item == "GET") methods.push_back("HEAD");
    if (comma == std::string_view::npos) break;
    route_methods.remove_prefix(comma + 1);
  }
  methods.push_back("OPTIONS");
  return joined(methods);
}

}  // namespace

std::vector<std::string> parse_cors_list(std::string_view text, std::string_view flag) {
  std::vector<std::string> items;
  const std::string whole = trimmed(text);
  if (whole.starts_with("[")) {
    nlohmann::json list;
    try {
      list = nlohmann::json::parse(whole);
    } catch (const nlohmann::json::exception& e) {
      fail("{}: '{}' is not a JSON list of strings: {}", flag, whole, e.what());
    }
    for (const nlohmann::json& item : list) {
      if (!item.is_string()) fail("{}: '{}' is not a JSON list of strings", flag, whole);
      items.push_back(trimmed(item.get<std::string>()));
    }
  } else {
    std::string_view rest = whole;
    for (;;) {
      const size_t comma = rest.find(',');
      items.push_back(trimmed(rest.substr(0, comma)));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  for (const std::string& item : items)
    if (item.empty()) fail("{}: '{}' has an empty item", flag, whole);
  return items;
}

void check_cors_options(const CorsOptions& cors) {
  if (!cors.allow_credentials) return;
  if (!cors.enabled())
    fail("--allow-credentials: CORS is off without --allowed-origins; list the origins allowed");
  if (has_star(cors.origins))
    fail(
        "--allow-credentials: browsers refuse credentials from a server that allows every origin "
        "(--allowed-origins '*'); list the origins allowed instead");
}

bool cors_origin_allowed(const CorsOptions& cors, std::string_view origin) {
  if (!cors.enabled() || origin.empty()) return false;
  return has_star(cors.origins) ||
         std::find(cors.origins.begin(), cors.origins.end(), origin) != cors.origins.end();
}

std::string cors_reply_headers(const CorsOptions& cors, const HttpHead& head) {
  const std::string* origin = head.header("Origin");
  if (origin == nullptr || !cors_origin_allowed(cors, *origin)) return "";
  // "*" needs no Vary: the answer is the same for every origin. A listed origin is echoed, and a
  // cache must not hand one origin's answer to another.
  if (has_star(cors.origins)) return "Access-Control-Allow-Origin: *\r\n";
  return fmt::format("Access-Control-Allow-Origin: {}\r\nVary: Origin\r\n{}", *origin,
                     cors.allow_credentials ? "Access-Control-Allow-Credentials: true\r\n" : "");
}

std::optional<std::string> cors_preflight_headers(const CorsOptions& cors, const HttpHead& head,
                                                  std::string_view route_methods) {
  if (head.method != "OPTIONS" || head.header("Access-Control-Request-Method") == nullptr)
    return std::nullopt;
  std::string out = cors_reply_headers(cors, head);
  if (out.empty()) return std::nullopt;
  const std::string methods =
      has_star(cors.methods) ? route_methods_for_preflight(route_methods) : joined(cors.methods);
  // With "*" the requested headers are echoed rather than answered "*": the wildcard does not
  // cover Authorization, which is exactly the header an API client sends.
  const std::string* requested = head.header("Access-Control-Request-Headers");
  const std::string headers = !has_star(cors.headers) ? joined(cors.headers)
                              : requested != nullptr  ? *requested
                                                      : "*";
  out += fmt::format("Access-Control-Allow-Methods: {}\r\n", methods);
  if (!headers.empty()) out += fmt::format("Access-Control-Allow-Headers: {}\r\n", headers);
  out += fmt::format("Access-Control-Max-Age: {}\r\n", cors.max_age_seconds);
  return out;
}

}  // namespace minimax
