#include "serve/web_assets.h"

#include <array>
#include <utility>

namespace minimax {

std::string_view web_content_type(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kTypes = {{
      {".html", "text/html; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
  }};
  for (const auto& [extension, type] : kTypes)
    if (name.size() > extension.size() && name.ends_with(extension)) return type;
  return "";
}

const EmbeddedFile* find_web_file(std::string_view path) {
  if (path.empty() || path.front() != '/') return nullptr;
  const std::string_view name = path == "/" ? "index.html" : path.substr(1);
  for (const EmbeddedFile& file : embedded_web_files())
    if (file.name == name) return &file;
  return nullptr;
}

HttpReply web_file_reply(const EmbeddedFile& file) {
  HttpReply reply{200, std::string(web_content_type(file.name)), std::string(file.bytes), {}};
  // no-cache: the browser asks again each time, so a restarted server with a newer binary never
  // runs an older page against its API. The files are a few KB from the same host; validators
  // (ETag) would save little, and the routes do not see request headers to answer them.
  // The policy allows this origin only: the page loads no CDN, and injected markup could neither
  // run inline script nor send the API key it holds elsewhere. nosniff: the types above are meant.
  reply.headers =
      "Cache-Control: no-cache\r\n"
      "Content-Security-Policy: default-src 'self'; img-src 'self' data:; base-uri 'none'; "
      "form-action 'none'; frame-ancestors 'none'\r\n"
      "X-Content-Type-Options: nosniff\r\n";
  return reply;
}

}  // namespace minimax
