// The chat page that `minimax serve` answers at GET / (docs/api.md "Chat page"): its files live in
// src/serve/web/ and are compiled into the binary by cmake/embed_web.cmake, so the page needs no
// file beside the binary and loads nothing from elsewhere (its Content-Security-Policy forbids it).
#pragma once

#include <span>
#include <string_view>

#include "serve/http_server.h"

namespace minimax {

struct EmbeddedFile {
  std::string_view name;   // "index.html", "chat.js": the file's name in src/serve/web/
  std::string_view bytes;  // its content
};

// Every file of src/serve/web/, sorted by name (defined in the generated web_assets_data.cc).
std::span<const EmbeddedFile> embedded_web_files();

// The Content-Type a page file is served with, by its extension ("chat.js" → text/javascript);
// "" for an extension the page has no business using.
std::string_view web_content_type(std::string_view name);

// The embedded file that answers GET `path` ("/" is index.html, "/chat.js" is chat.js), or nullptr.
const EmbeddedFile* find_web_file(std::string_view path);

// The reply for an embedded file: its Content-Type, and headers that keep a browser from caching a
// page older than the binary and from loading anything the page does not ship itself.
HttpReply web_file_reply(const EmbeddedFile& file);

}  // namespace minimax
