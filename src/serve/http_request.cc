#include "serve/http_request.h"

#include <fmt/format.h>
#include <strings.h>

#include <algorithm>

namespace minimax {
namespace {

constexpr size_t kBlock = size_t{1} << 20;  // a large body's unit of allocation
constexpr size_t kMaxChunkLine = 1024;      // a chunk-size line, extensions included
constexpr size_t kMaxTrailerBytes = 8192;   // all trailer lines of a chunked body

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0 &&
         a.find('\0') == std::string_view::npos;
}

bool is_token_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_token_char);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The next line of `in` from `pos` without its line end (CRLF or a bare LF), advancing `pos`
// past it; nullopt when no line end has arrived yet.
std::optional<std::string_view> next_line(std::string_view in, size_t& pos) {
  const size_t end = in.find('\n', pos);
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view line = in.substr(pos, end - pos);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  pos = end + 1;
  return line;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decoded(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Whether the comma-separated header value lists `token` (any case).
bool lists(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    if (equals_ignoring_case(trim(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

std::string body_limit_message(size_t max_body_bytes) {
  return fmt::format("request body over {} bytes", max_body_bytes);
}

HeadResult refused(int status, std::string message) {
  return HeadResult{0, HttpRefusal{status, std::move(message)}};
}

// RFC 9112 §2.2: a CR is only part of a CRLF line end. One left inside a line (next_line strips
// the line end's) is refused rather than taken as a line break, which some parser in front of
// this server might do: "X-A: a\rContent-Length: 99" would then be two headers to it, one here.
bool has_bare_cr(std::string_view line) { return line.find('\r') != std::string_view::npos; }

// Control bytes (0x00-0x1F, 0x7F), HTAB allowed or not: RFC 9112 §3.2 and RFC 9110 §5.5 allow
// none in a request target and only HTAB in a field value. A NUL in a header value would
// otherwise reach the API key comparison and the logs.
bool has_control(std::string_view s, bool tab_allowed) {
  return std::any_of(s.begin(), s.end(), [&](char c) {
    const auto b = static_cast<unsigned char>(c);
    return (b < 0x20 && !(tab_allowed && c == '\t')) || b == 0x7F;
  });
}

// RFC 9112 §3.2.2: a target in absolute-form ("http://host:port/path?query"), which a server
// must accept, split into its authority and the rest; false for any other form. Only http and
// https; userinfo ("user@host") is refused (RFC 9110 §4.2.4 forbids sending it).
bool split_absolute_form(std::string_view target, std::string_view& authority,
                         std::string_view& rest) {
  const size_t scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos) return false;
  const std::string_view scheme = target.substr(0, scheme_end);
  if (!equals_ignoring_case(scheme, "http") && !equals_ignoring_case(scheme, "https")) return false;
  target.remove_prefix(scheme_end + 3);
  const size_t end = target.find_first_of("/?");
  authority = target.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : target.substr(end);
  return !authority.empty() && authority.find('@') == std::string_view::npos;
}

// Fields that must come once: RFC 9112 §3.2 for Host; for the credentials, which of two values
// counts would depend on which one a reader takes (a proxy may check the last, this server reads
// the first), so neither is trusted.
std::optional<HttpRefusal> check_singletons(const HttpHead& head, bool http11) {
  for (const char* name : {"Host", "Authorization", "x-api-key"}) {
    size_t count = 0;
    head.header(name, &count);
    if (count > 1)
      return HttpRefusal{400, fmt::format("the {} header was sent {} times", name, count)};
  }
  if (http11 && head.header("Host") == nullptr)
    return HttpRefusal{400, "an HTTP/1.1 request needs a Host header"};
  return std::nullopt;
}

// Decides the body's framing from the parsed headers (see read_http_head).
std::optional<HttpRefusal> frame_body(HttpHead& head, size_t max_body_bytes) {
  size_t lengths = 0, encodings = 0;
  const std::string* length = head.header("Content-Length", &lengths);
  const std::string* encoding = head.header("Transfer-Encoding", &encodings);
  if (encoding != nullptr) {
    if (encodings > 1 || !equals_ignoring_case(*encoding, "chunked"))
      return HttpRefusal{
          400, fmt::format("Transfer-Encoding '{}' is not supported (only chunked)", *encoding)};
    if (length != nullptr)
      return HttpRefusal{400, "both Content-Length and Transfer-Encoding were sent"};
    head.framing = BodyFraming::kChunked;
  } else if (length != nullptr) {
    // Digits only: "-1", "+5", "1e3" would otherwise be read as some other number.
    if (lengths > 1 || length->empty() ||
        length->find_first_not_of("0123456789") != std::string::npos)
      return HttpRefusal{400, fmt::format("invalid Content-Length '{}'", *length)};
    const uint64_t bytes = length->size() > 19 ? UINT64_MAX : std::stoull(*length);
    if (bytes > max_body_bytes) return HttpRefusal{413, body_limit_message(max_body_bytes)};
    head.framing = BodyFraming::kLength;
    head.content_length = bytes;
  } else if (head.method == "POST" || head.method == "PUT" || head.method == "PATCH") {
    // These carry a body; without its length this server does not guess one. A DELETE without
    // either header has no body (RFC 9112 §6.3), as clients send it (DELETE /v1/responses/{id}).
    return HttpRefusal{411, "Content-Length or Transfer-Encoding: chunked is required"};
  }
  if (const std::string* expect = head.header("Expect")) {
    if (!equals_ignoring_case(*expect, "100-continue"))
      return HttpRefusal{417, fmt::format("Expect '{}' is not supported", *expect)};
    head.expect_continue = true;
  }
  return std::nullopt;
}

}  // namespace

const std::string* HttpHead::header(std::string_view name, size_t* count) const {
  const std::string* first = nullptr;
  size_t n = 0;
  for (const auto& [key, value] : headers) {
    if (key.size() != name.size() || strncasecmp(key.data(), name.data(), name.size()) != 0)
      continue;
    if (first == nullptr) first = &value;
    ++n;
  }
  if (count != nullptr) *count = n;
  return first;
}

HeadResult read_http_head(std::string_view in, size_t max_head_bytes, size_t max_body_bytes,
                          HttpHead& head) {
  const auto too_large = [&] {
    return refused(431, fmt::format("request head over {} bytes", max_head_bytes));
  };
  size_t pos = 0;
  std::optional<std::string_view> line;
  // Empty lines before a request line are skipped (RFC 9112 §2.2: a client may send a CRLF after
  // a body).
  while ((line = next_line(in, pos)) && line->empty()) {
  }
  if (!line) return in.size() > max_head_bytes ? too_large() : HeadResult{};
  if (pos > max_head_bytes) return too_large();
  const size_t first_space = line->find(' ');
  const size_t second_space = line->find(' ', first_space + 1);
  if (first_space == std::string_view::npos || second_space == std::string_view::npos ||
      line->find(' ', second_space + 1) != std::string_view::npos)
    return refused(400, "malformed request line");
  head = HttpHead{};
  head.method = std::string(line->substr(0, first_space));
  const std::string_view target = line->substr(first_space + 1, second_space - first_space - 1);
  const std::string_view version = line->substr(second_space + 1);
  if (has_bare_cr(*line)) return refused(400, "bare CR in the request line");
  if (!is_token(head.method)) return refused(400, "malformed request method");
  if (has_control(target, false)) return refused(400, "control character in the request target");
  std::string_view origin = target, authority;
  if (!target.starts_with('/') && !split_absolute_form(target, authority, origin))
    return refused(400, "malformed request target");
  if (version != "HTTP/1.1" && version != "HTTP/1.0")
    return refused(505, fmt::format("HTTP version '{}' is not supported", version));
  // "http://h" and "http://h?q" have an empty path, which stands for "/" (RFC 9110 §4.2.3).
  head.path = percent_decoded(origin.substr(0, origin.find('?')));
  if (head.path.empty()) head.path = "/";
  bool ended = false;
  while ((line = next_line(in, pos))) {
    if (pos > max_head_bytes) return too_large();
    if (line->empty()) {
      ended = true;
      break;
    }
    if (line->front() == ' ' || line->front() == '\t')
      return refused(400, "folded header lines are not accepted");
    if (has_bare_cr(*line)) return refused(400, "bare CR in a header line");
    const size_t colon = line->find(':');
    if (colon == std::string_view::npos || !is_token(line->substr(0, colon)))
      return refused(400, "malformed header line");
    const std::string_view name = line->substr(0, colon), value = trim(line->substr(colon + 1));
    if (has_control(value, true))
      return refused(400, fmt::format("control character in the {} header", name));
    head.headers.emplace_back(name, value);
  }
  if (!ended) return in.size() > max_head_bytes ? too_large() : HeadResult{};
  if (auto refusal = check_singletons(head, version == "HTTP/1.1"))
    return HeadResult{0, std::move(*refusal)};
  // With an absolute-form target, its authority replaces the Host header (RFC 9112 §3.2.2).
  if (const std::string* host = head.header("Host")) head.host = *host;
  if (!authority.empty()) head.host = std::string(authority);
  const std::string* connection = head.header("Connection");
  head.keep_alive = version == "HTTP/1.1" ? !(connection && lists(*connection, "close"))
                                          : (connection && lists(*connection, "keep-alive"));
  if (auto refusal = frame_body(head, max_body_bytes)) return HeadResult{0, std::move(*refusal)};
  return HeadResult{pos, std::nullopt};
}

BodyReader::BodyReader(const HttpHead& head, size_t max_body_bytes)
    : framing_(head.framing), length_(head.content_length), max_(max_body_bytes) {
  if (framing_ == BodyFraming::kLength) blocks_.emplace_back().reserve(length_);
}

BodyReader::Step BodyReader::refuse(int status, std::string message) {
  refusal_ = HttpRefusal{status, std::move(message)};
  blocks_.clear();
  return Step::kRefused;
}

void BodyReader::append(std::string_view data) {
  total_ += data.size();
  if (framing_ == BodyFraming::kLength) {
    blocks_.back().append(data);
    return;
  }
  while (!data.empty()) {
    if (blocks_.empty() || blocks_.back().size() == kBlock) blocks_.emplace_back().reserve(kBlock);
    const size_t n = std::min(data.size(), kBlock - blocks_.back().size());
    blocks_.back().append(data.substr(0, n));
    data.remove_prefix(n);
  }
}

BodyReader::Step BodyReader::feed(std::string& buffer) {
  const std::string_view in = buffer;
  size_t pos = 0;
  Step step = Step::kMore;
  if (framing_ != BodyFraming::kChunked) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(length_, in.size()));
    append(in.substr(0, n));
    length_ -= n;
    pos = n;
    if (length_ == 0) step = Step::kDone;
  }
  while (framing_ == BodyFraming::kChunked && step == Step::kMore) {
    if (chunk_ == Chunk::kData) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(length_, in.size() - pos));
      append(in.substr(pos, n));
      pos += n;
      length_ -= n;
      if (length_ > 0) break;
      chunk_ = Chunk::kDataEnd;
      continue;
    }
    const size_t line_start = pos;
    const std::optional<std::string_view> line = next_line(in, pos);
    if (!line) {
      // The bound of a whole line, plus its CR.
      if (in.size() - pos > (chunk_ == Chunk::kTrailer ? kMaxTrailerBytes : kMaxChunkLine) + 1)
        return refuse(400, "malformed chunked body: line too long");
      break;
    }
    if (chunk_ == Chunk::kDataEnd) {
      if (!line->empty()) return refuse(400, "malformed chunked body: data longer than its size");
      chunk_ = Chunk::kSize;
    } else if (chunk_ == Chunk::kTrailer) {
      length_ += pos - line_start;  // trailer bytes so far (length_ is free once the data ended)
      if (length_ > kMaxTrailerBytes)
        return refuse(400, "malformed chunked body: trailer too long");
      if (line->empty()) step = Step::kDone;
    } else if (line->size() > kMaxChunkLine) {
      return refuse(400, "malformed chunked body: line too long");
    } else {  // a chunk-size line: hex digits, then optional ";extensions"
      const std::string_view size = trim(line->substr(0, line->find(';')));
      if (size.empty() ||
          !std::all_of(size.begin(), size.end(), [](char c) { return hex_digit(c) >= 0; }))
        return refuse(400, "malformed chunked body: bad chunk size");
      const size_t digits = size.size() - std::min(size.find_first_not_of('0'), size.size());
      if (digits > 15) return refuse(413, body_limit_message(max_));
      length_ = std::stoull(std::string(size), nullptr, 16);
      if (length_ > max_ - total_) return refuse(413, body_limit_message(max_));
      chunk_ = length_ == 0 ? Chunk::kTrailer : Chunk::kData;
    }
  }
  buffer.erase(0, pos);
  return step;
}

std::string BodyReader::take() {
  if (blocks_.size() == 1) return std::move(blocks_.front());
  std::string body;
  body.reserve(total_);
  for (std::string& block : blocks_) {
    body += block;
    std::string().swap(block);
  }
  blocks_.clear();
  return body;
}

}  // namespace minimax
