// Reading HTTP/1.1 requests from bytes as they arrive: the head (request line and headers) and
// the body (Content-Length or chunked), each with a size limit that holds while the bytes come
// in. Pure functions over buffers, no sockets: the event loop (http_server.cc) feeds whatever
// it has read, and the fuzz target feeds arbitrary bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace minimax {

// Why a request is refused before it reaches the routes: the HTTP status and a message that
// names the offending part.
struct HttpRefusal {
  int status = 400;
  std::string message;
};

enum class BodyFraming { kNone, kLength, kChunked };

struct HttpHead {
  std::string method;
  std::string path;  // the target's path, without its query string, %XX decoded
  // The Host header, or the target's authority when the target is in absolute-form
  // ("GET http://h:8000/health"); "" when an HTTP/1.0 request sent neither.
  std::string host;
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, values trimmed
  bool keep_alive = true;        // HTTP/1.1 unless "Connection: close"; 1.0 only with keep-alive
  bool expect_continue = false;  // "Expect: 100-continue"
  BodyFraming framing = BodyFraming::kNone;
  uint64_t content_length = 0;  // with kLength

  // The first value of header `name` (any case), or nullptr; `count` gets how often it was sent.
  const std::string* header(std::string_view name, size_t* count = nullptr) const;
  bool body_expected() const {
    return framing == BodyFraming::kChunked || (framing == BodyFraming::kLength && content_length);
  }
};

// The outcome of reading a head from the start of a buffer.
struct HeadResult {
  size_t consumed = 0;                 // bytes of head (0: incomplete, read more)
  std::optional<HttpRefusal> refusal;  // set: the request cannot be served (reply and close)
};

// Reads the head at the start of `in` into `head`, following RFC 9112: a target in origin-form
// ("/path?q") or absolute-form ("http://host/path?q"). Incomplete heads longer than
// `max_head_bytes` are refused with 431, as are complete ones; malformed ones with 400 (among
// them: a CR that does not end a line, a control byte in the target or in a header value (HTAB
// aside), an HTTP/1.1 request without Host, and Host, Authorization or x-api-key sent twice); a
// body framing that cannot be trusted (a Content-Length that is not plain digits or sent twice, a
// Transfer-Encoding other than chunked, or both) with 400, a Content-Length over
// `max_body_bytes` with 413, a body-carrying method with no framing with 411, an Expect other than
// 100-continue with 417.
HeadResult read_http_head(std::string_view in, size_t max_head_bytes, size_t max_body_bytes,
                          HttpHead& head);

// Collects a body as it arrives, decoding chunked framing, and refuses it (413) as soon as it
// passes the limit, before the rest is read. Large bodies are kept in 1 MiB blocks, so a refused
// upload peaks at the limit plus one block rather than at the 1.5-2x of a string that grows by
// copying.
class BodyReader {
 public:
  BodyReader(const HttpHead& head, size_t max_body_bytes);
  enum class Step { kMore, kDone, kRefused };
  // Consumes what it can of `in` (erasing it from the front). kRefused sets refusal().
  Step feed(std::string& in);
  const HttpRefusal& refusal() const { return refusal_; }
  // The whole body, once feed() returned kDone.
  std::string take();

 private:
  enum class Chunk { kSize, kData, kDataEnd, kTrailer, kDone };
  void append(std::string_view data);
  Step refuse(int status, std::string message);

  BodyFraming framing_;
  uint64_t length_;  // Content-Length, or the bytes left in the current chunk
  size_t max_;
  size_t total_ = 0;
  Chunk chunk_ = Chunk::kSize;
  std::vector<std::string> blocks_;
  HttpRefusal refusal_;
};

}  // namespace minimax
