// The blocking HTTP/1.1 client of the gates: getaddrinfo, a non-blocking connect bounded by the
// timeout, one request with "Connection: close", and the whole reply read until the server closes.
#include "gates/http_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace minimax::gates {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Closes the socket on every path out of a request.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

int timeout_ms(double seconds) {
  return static_cast<int>(std::clamp(seconds * 1000.0, 1.0, 2.0e9));
}

// Waits for `events` on `fd`; false on timeout.
bool wait_for(int fd, short events, double seconds) {
  pollfd entry{fd, events, 0};
  for (;;) {
    const int ready = ::poll(&entry, 1, timeout_ms(seconds));
    if (ready < 0 && errno == EINTR) continue;
    return ready > 0;
  }
}

int connect_to(const HttpUrl& url, double seconds) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(url.port);
  const int rc = ::getaddrinfo(url.host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0)
    throw ConnectionError(fmt::format("cannot resolve host of {}: {}", url.text, gai_strerror(rc)));
  std::string last_error = "no address";
  int connected = -1;
  for (addrinfo* address = found; address != nullptr && connected < 0; address = address->ai_next) {
    const int fd =
        ::socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, address->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    const int flags = ::fcntl(fd, F_GETFL, 0);
    ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int status = ::connect(fd, address->ai_addr, address->ai_addrlen);
    if (status < 0 && errno == EINPROGRESS) {
      if (!wait_for(fd, POLLOUT, seconds)) {
        last_error = fmt::format("no answer within {} s", seconds);
      } else {
        int error = 0;
        socklen_t length = sizeof(error);
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
        status = error == 0 ? 0 : -1;
        if (error != 0) last_error = std::strerror(error);
      }
    } else if (status < 0) {
      last_error = std::strerror(errno);
    }
    if (status == 0) {
      ::fcntl(fd, F_SETFL, flags);
      connected = fd;
    } else {
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (connected < 0)
    throw ConnectionError(fmt::format("cannot connect to {}: {}", url.text, last_error));
  return connected;
}

void send_all(int fd, std::string_view data, const HttpUrl& url, double seconds) {
  while (!data.empty()) {
    if (!wait_for(fd, POLLOUT, seconds))
      throw ConnectionError(fmt::format("{}: sending the request timed out", url.text));
    const ssize_t sent = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw ConnectionError(
          fmt::format("{}: sending the request failed: {}", url.text, std::strerror(errno)));
    }
    data.remove_prefix(static_cast<size_t>(sent));
  }
}

std::string receive_all(int fd, const HttpUrl& url, double seconds) {
  std::string raw;
  char buffer[65536];
  for (;;) {
    if (!wait_for(fd, POLLIN, seconds))
      throw ConnectionError(fmt::format("{}: no reply within {} s", url.text, seconds));
    const ssize_t got = ::recv(fd, buffer, sizeof(buffer), 0);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw ConnectionError(
          fmt::format("{}: reading the reply failed: {}", url.text, std::strerror(errno)));
    }
    if (got == 0) return raw;
    raw.append(buffer, static_cast<size_t>(got));
  }
}

size_t parse_size(std::string_view text, int base, std::string_view what, std::string_view source) {
  text = trim_whitespace(text);
  size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (error != std::errc() || end == text.data())
    fail("{}: malformed {} \"{}\" in the HTTP reply", source, what, text);
  return value;
}

std::string decode_chunked(std::string_view body, std::string_view source) {
  std::string out;
  for (;;) {
    const size_t line_end = body.find("\r\n");
    if (line_end == std::string_view::npos) fail("{}: truncated chunked HTTP body", source);
    std::string_view size_text = body.substr(0, line_end);
    size_text = size_text.substr(0, size_text.find(';'));  // chunk extensions are ignored
    const size_t size = parse_size(size_text, 16, "chunk size", source);
    body.remove_prefix(line_end + 2);
    if (size == 0) return out;
    if (body.size() < size + 2) fail("{}: truncated chunked HTTP body", source);
    out.append(body.substr(0, size));
    body.remove_prefix(size + 2);
  }
}

}  // namespace

std::string_view trim_whitespace(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

HttpUrl parse_http_url(const std::string& url, std::string_view what) {
  HttpUrl parsed;
  parsed.text = url;
  constexpr std::string_view kScheme = "http://";
  std::string_view rest = url;
  if (rest.starts_with("https://"))
    fail("{} {}: https is not supported; use the server's plain http address", what, url);
  if (!rest.starts_with(kScheme)) fail("{} {}: expected http://HOST[:PORT][/PATH]", what, url);
  rest.remove_prefix(kScheme.size());
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (authority.empty()) fail("{} {}: no host", what, url);
  std::string_view host = authority;
  if (authority.front() == '[') {  // [IPv6]:port
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) fail("{} {}: unclosed '[' in the host", what, url);
    host = authority.substr(1, close - 1);
    authority.remove_prefix(close + 1);
    if (!authority.empty() && authority.front() != ':')
      fail("{} {}: unexpected text after the IPv6 host", what, url);
  } else {
    const size_t colon = authority.find(':');
    host = authority.substr(0, colon);
    authority = colon == std::string_view::npos ? "" : authority.substr(colon);
  }
  if (host.empty()) fail("{} {}: no host", what, url);
  parsed.host = std::string(host);
  if (!authority.empty()) {
    const std::string_view port_text = authority.substr(1);
    int port = 0;
    const auto [end, error] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (error != std::errc() || end != port_text.data() + port_text.size() || port <= 0 ||
        port > 65535)
      fail("{} {}: bad port \"{}\"", what, url, port_text);
    parsed.port = port;
  }
  while (path.ends_with('/')) path.remove_suffix(1);
  if (path.ends_with("/v1")) path.remove_suffix(3);
  parsed.base_path = std::string(path);
  return parsed;
}

std::string HttpUrl::root() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return fmt::format("http://{}{}{}:{}{}", ipv6 ? "[" : "", host, ipv6 ? "]" : "", port, base_path);
}

HttpResponse parse_http_response(std::string_view raw, std::string_view source) {
  const size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string_view::npos) {
    if (raw.empty()) fail("{}: the server closed the connection without a reply", source);
    fail("{}: incomplete HTTP reply ({} bytes, no end of headers)", source, raw.size());
  }
  std::string_view head = raw.substr(0, head_end);
  std::string_view body = raw.substr(head_end + 4);
  const size_t status_end = head.find("\r\n");
  const std::string_view status_line = head.substr(0, status_end);
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12)
    fail("{}: not an HTTP reply (status line \"{}\")", source, status_line.substr(0, 80));
  HttpResponse response;
  response.status = static_cast<int>(parse_size(status_line.substr(9, 3), 10, "status", source));
  bool chunked = false;
  bool has_length = false;
  size_t length = 0;
  head = status_end == std::string_view::npos ? "" : head.substr(status_end + 2);
  while (!head.empty()) {
    const size_t line_end = head.find("\r\n");
    const std::string_view line = head.substr(0, line_end);
    head = line_end == std::string_view::npos ? "" : head.substr(line_end + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string name = lower(trim_whitespace(line.substr(0, colon)));
    const std::string_view value = trim_whitespace(line.substr(colon + 1));
    if (name == "content-type") response.content_type = std::string(value);
    if (name == "transfer-encoding" && lower(value).find("chunked") != std::string::npos)
      chunked = true;
    if (name == "content-length") {
      has_length = true;
      length = parse_size(value, 10, "Content-Length", source);
    }
  }
  if (chunked) {
    response.body = decode_chunked(body, source);
  } else if (has_length) {
    if (body.size() < length)
      fail("{}: HTTP body truncated ({} of {} bytes)", source, body.size(), length);
    response.body = std::string(body.substr(0, length));
  } else {
    response.body = std::string(body);
  }
  return response;
}

HttpClient::HttpClient(HttpUrl url, std::string api_key, double timeout_seconds)
    : url_(std::move(url)), api_key_(std::move(api_key)), timeout_seconds_(timeout_seconds) {}

HttpResponse HttpClient::get(std::string_view path) const { return request("GET", path, ""); }

HttpResponse HttpClient::post_json(std::string_view path, std::string_view body) const {
  return request("POST", path, body);
}

HttpResponse HttpClient::request(std::string_view method, std::string_view path,
                                 std::string_view body) const {
  const std::string target = url_.base_path + std::string(path);
  const std::string where = fmt::format("{} {}{}", method, url_.root(), path);
  Socket socket(connect_to(url_, timeout_seconds_));
  const bool ipv6 = url_.host.find(':') != std::string::npos;
  std::string request = fmt::format("{} {} HTTP/1.1\r\nHost: {}{}{}:{}\r\n", method, target,
                                    ipv6 ? "[" : "", url_.host, ipv6 ? "]" : "", url_.port);
  request += "Accept: application/json\r\nConnection: close\r\n";
  if (!api_key_.empty()) request += fmt::format("Authorization: Bearer {}\r\n", api_key_);
  if (method == "POST")
    request += fmt::format("Content-Type: application/json\r\nContent-Length: {}\r\n", body.size());
  request += "\r\n";
  request += body;
  send_all(socket.fd(), request, url_, timeout_seconds_);
  const std::string raw = receive_all(socket.fd(), url_, timeout_seconds_);
  try {
    return parse_http_response(raw, where);
  } catch (const Error& e) {
    throw ConnectionError(e.what());
  }
}

}  // namespace minimax::gates
