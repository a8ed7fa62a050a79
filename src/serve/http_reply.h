// Writing HTTP/1.1 replies: status lines and headers, whole replies with a Content-Length, and
// sending on a non-blocking socket with a bound on how long a client may stop reading. Used by
// the transport's event loop and its workers (serve/http_server.cc).
#pragma once

#include <string>
#include <string_view>

#include "serve/http_server.h"

namespace minimax {

// The reason phrase of `status` ("Not Found").
std::string_view reason(int status);

// The status line and headers of a reply, without the empty line that ends them; `close` adds
// "Connection: close", `extra_headers` are whole header lines ("Allow: GET\r\n").
std::string reply_head(int status, std::string_view content_type, bool close,
                       std::string_view extra_headers);

// A whole (non-streamed) reply: head (with `extra_headers`, then the reply's own), Content-Length,
// and the body unless `head_only` (HEAD).
std::string whole_reply(const HttpReply& reply, bool close, bool head_only,
                        std::string_view extra_headers = "");

}  // namespace minimax
