#include "serve/http_reply.h"

#include <fmt/format.h>

#include <utility>

namespace minimax {

std::string_view reason(int status) {
  static constexpr std::pair<int, std::string_view> kReasons[] = {
      {100, "Continue"},
      {200, "OK"},
      {400, "Bad Request"},
      {401, "Unauthorized"},
      {403, "Forbidden"},
      {404, "Not Found"},
      {405, "Method Not Allowed"},
      {408, "Request Timeout"},
      {411, "Length Required"},
      {413, "Payload Too Large"},
      {417, "Expectation Failed"},
      {429, "Too Many Requests"},
      {431, "Request Header Fields Too Large"},
      {500, "Internal Server Error"},
      {503, "Service Unavailable"},
      {505, "HTTP Version Not Supported"}};
  for (const auto& [code, text] : kReasons)
    if (code == status) return text;
  return status < 400 ? "OK" : status < 500 ? "Bad Request" : "Internal Server Error";
}

std::string reply_head(int status, std::string_view content_type, bool close,
                       std::string_view extra_headers) {
  return fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\n{}{}", status, reason(status),
                     content_type, close ? "Connection: close\r\n" : "", extra_headers);
}

std::string whole_reply(const HttpReply& reply, bool close, bool head_only,
                        std::string_view extra_headers) {
  std::string out = reply_head(reply.status, reply.content_type, close,
                               std::string(extra_headers) + reply.headers);
  out += fmt::format("Content-Length: {}\r\n\r\n", reply.body.size());
  if (!head_only) out += reply.body;
  return out;
}

}  // namespace minimax
