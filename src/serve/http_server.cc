// cpp-httplib behind serve/http_server.h; the only file that includes httplib.h.
#include "serve/http_server.h"

// httplib.h: Debian's libcpp-httplib sends without MSG_NOSIGNAL: whoever runs a server must ignore
// SIGPIPE (serve_cmd.cc and the tests do), or a vanished client kills the process.
#include <dirent.h>
#include <httplib.h>
#include <netdb.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/log.h"

namespace minimax {

bool bearer_matches(std::string_view authorization, std::string_view api_key) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.substr(0, kBearer.size()) != kBearer) return false;
  std::string_view given = authorization.substr(kBearer.size());
  unsigned char diff = given.size() == api_key.size() ? 0 : 1;
  for (size_t i = 0; i < api_key.size(); ++i)
    diff |= static_cast<unsigned char>(api_key[i]) ^
            static_cast<unsigned char>(i < given.size() ? given[i] : 0);
  return diff == 0;
}

struct HttpServer::Impl {
  httplib::Server server;
  std::atomic<bool> stop_requested{false};   // stop() was called
  std::atomic<bool> listener_closed{false};  // httplib's stop() ran (it must run only once)
};

namespace {

void send(const HttpReply& reply, httplib::Response& res) {
  res.status = reply.status;
  if (!reply.stream) {
    res.set_content(reply.body, reply.content_type.c_str());
    return;
  }
  auto stream = reply.stream;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(reply.content_type, [stream](size_t, httplib::DataSink& sink) {
    const ChunkWrite write = [&sink](std::string_view data) {
      return sink.write(data.data(), data.size());
    };
    stream(write);
    sink.done();
    return true;
  });
}

// The numeric host and port of a socket address, as httplib writes Request::remote_addr.
bool numeric_address(const sockaddr_storage& address, socklen_t length, std::string& host,
                     int& port) {
  char name[NI_MAXHOST], service[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, name, sizeof(name), service,
                  sizeof(service), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return false;
  host = name;
  port = std::atoi(service);
  return true;
}

// What identifies a request's connection while it is open: the local port and the peer's
// address and port.
struct Endpoints {
  int local_port = -1;
  std::string remote_addr;
  int remote_port = -1;
};

// The accepted socket of the connection with these endpoints, or -1. httplib 0.11 does not hand
// it to handlers, so it is found among the process's open sockets; the connection stays open
// while its request is handled.
int connection_socket(const Endpoints& want) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    const int fd = std::atoi(entry->d_name);
    sockaddr_storage local{}, peer{};
    socklen_t local_length = sizeof(local), peer_length = sizeof(peer);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length) != 0 ||
        getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length) != 0)
      continue;  // not a socket, or not a connected one (the listening socket)
    std::string local_host, peer_host;
    int local_port = 0, peer_port = 0;
    if (numeric_address(local, local_length, local_host, local_port) &&
        numeric_address(peer, peer_length, peer_host, peer_port) && local_port == want.local_port &&
        peer_port == want.remote_port && peer_host == want.remote_addr) {
      found = fd;
      break;
    }
  }
  closedir(dir);
  return found;
}

// Alive until the peer's end of stream (recv 0) or a reset; pending bytes (a pipelined request)
// mean alive. Unknown socket: assumed alive, as before this check existed. The socket is looked
// up at the first call, not per request: most requests (health, metrics, models) never ask.
// Copies share the lookup; all calls come from the request's own thread.
ClientAlive client_alive_probe(const httplib::Request& req) {
  auto fd = std::make_shared<std::optional<int>>();
  return [fd, want = Endpoints{req.local_port, req.remote_addr, req.remote_port}] {
    if (!fd->has_value()) *fd = connection_socket(want);
    if (**fd < 0) return true;
    char byte;
    const ssize_t n = recv(**fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return true;
    if (n == 0) return false;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  };
}

// Ends a connection whose request body is still (partly) unread: sends FIN after the reply, then
// reads and discards what the client still sends for up to 2 s. Closing at once with unread data
// would send a reset, and a client still uploading (curl, most HTTP libraries) would see the reset
// instead of the reply.
void linger_close(const Endpoints& who) {
  const int fd = connection_socket(who);
  if (fd < 0) return;
  shutdown(fd, SHUT_WR);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  char discard[16384];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd readable{fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&readable, 1, static_cast<int>(left.count())) <= 0) break;
    if (recv(fd, discard, sizeof(discard), 0) <= 0) break;
  }
}

// A reply after which the connection is closed: for a request whose body was not read (refused
// before reading it), httplib would otherwise parse the unread body as the next request. httplib
// 0.11 closes a connection only when writing the reply fails, so the body goes out through a
// provider that writes it whole and then reports failure. An empty body is sent as a newline:
// httplib never calls a provider of zero bytes, so the connection would stay open.
void send_and_close(const httplib::Request& req, const HttpReply& reply, httplib::Response& res) {
  res.status = reply.status;
  res.set_header("Connection", "close");
  auto body = std::make_shared<std::string>(reply.body.empty() ? "\n" : reply.body);
  res.set_content_provider(
      body->size(), reply.content_type,
      [body, who = Endpoints{req.local_port, req.remote_addr, req.remote_port}](
          size_t offset, size_t, httplib::DataSink& sink) {
        if (sink.write(body->data() + offset, body->size() - offset)) linger_close(who);
        return false;
      });
}

// The whole value of header `name` (nullptr when absent) and how many times it was sent.
// Request::get_header_value returns a C string, which would end a value at a NUL byte.
const std::string* header(const httplib::Request& req, const char* name, size_t* count = nullptr) {
  auto [begin, end] = req.headers.equal_range(name);
  if (count != nullptr) *count = static_cast<size_t>(std::distance(begin, end));
  return begin == end ? nullptr : &begin->second;
}

bool method_listed(std::string_view allowed, std::string_view method) {
  while (!allowed.empty()) {
    const size_t comma = allowed.find(',');
    std::string_view item = allowed.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (item == method || (method == "HEAD" && item == "GET")) return true;
    if (comma == std::string_view::npos) break;
    allowed.remove_prefix(comma + 1);
  }
  return false;
}

bool is_socket_on_port(int fd, int port) {
  sockaddr_storage local{}, peer{};
  socklen_t local_length = sizeof(local), peer_length = sizeof(peer);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length) != 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length) != 0)
    return false;
  std::string host;
  int local_port = 0;
  return numeric_address(local, local_length, host, local_port) && local_port == port;
}

// Why binding host:port fails, for the error message: httplib reports only that it failed, so
// the bind is tried again here with the same socket options.
std::string bind_failure(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    return gai_strerror(rc);
  std::string why = "unknown reason";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    const bool bound = ::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 1) == 0;
    why = bound ? "the address became free again; retry" : std::strerror(errno);
    close(fd);
    if (!bound) break;
  }
  freeaddrinfo(found);
  return why;
}

}  // namespace

HttpServer::HttpServer(HttpRoutes& routes, HttpServerOptions options)
    : impl_(std::make_unique<Impl>()), routes_(routes), options_(std::move(options)) {
  httplib::Server& s = impl_->server;
  const size_t threads = options_.threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.set_payload_max_length(options_.max_body_bytes);
  s.set_read_timeout(options_.read_timeout_seconds, 0);
  s.set_keep_alive_max_count(1000);

  // SO_REUSEADDR only (httplib's default adds SO_REUSEPORT): a restarted server can bind while
  // the old connections linger in TIME_WAIT, but a second server on a port in use fails to bind
  // instead of silently taking half of the connections.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });

  // Everything decided from the request line and headers, before httplib reads a body: framing,
  // size, method and API key. A refusal here closes the connection, as the body stays unread.
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    const bool body_expected = req.method == "POST" || req.method == "PUT" ||
                               req.method == "PATCH" || req.method == "DELETE" ||
                               req.method == "PRI";  // httplib reads a body for these
    size_t lengths = 0;
    const std::string* length = header(req, "Content-Length", &lengths);
    const std::string* encoding = header(req, "Transfer-Encoding");
    bool body_pending = false;
    auto refuse = [&](int status, const std::string& message) {
      const HttpReply reply = routes_.error(status, message);
      if (body_pending || status == 400 || status == 411 || status == 413)
        send_and_close(req, reply, res);
      else
        send(reply, res);
      return httplib::Server::HandlerResponse::Handled;
    };
    if (encoding != nullptr) {
      if (strcasecmp(encoding->c_str(), "chunked") != 0 ||
          encoding->find('\0') != std::string::npos)
        return refuse(
            400, fmt::format("Transfer-Encoding '{}' is not supported (only chunked)", *encoding));
      if (length != nullptr)
        return refuse(400, "both Content-Length and Transfer-Encoding were sent");
      body_pending = body_expected;
    } else if (length != nullptr) {
      // Digits only: httplib's strtoull would take "-1" as 2^64 - 1 and wait for that many bytes.
      if (lengths > 1 || length->empty() ||
          length->find_first_not_of("0123456789") != std::string::npos)
        return refuse(400, fmt::format("invalid Content-Length '{}'", *length));
      const uint64_t bytes = length->size() > 19 ? UINT64_MAX : std::stoull(*length);
      if (bytes > options_.max_body_bytes)
        return refuse(413, fmt::format("request body over {} bytes", options_.max_body_bytes));
      body_pending = body_expected && bytes > 0;
    } else if (body_expected) {
      // Without either header httplib would read the body until the client closes.
      return refuse(411, "Content-Length or Transfer-Encoding: chunked is required");
    }
    const std::string allowed = routes_.allowed_methods(req.path);
    if (!allowed.empty() && !method_listed(allowed, req.method)) {
      refuse(405, fmt::format("method {} is not allowed on {}", req.method, req.path));
      res.set_header("Allow", allowed);
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!options_.api_key.empty() && req.path.rfind("/v1/", 0) == 0) {
      const std::string* authorization = header(req, "Authorization");
      if (authorization == nullptr || !bearer_matches(*authorization, options_.api_key))
        return refuse(401, "Invalid or missing API key (Authorization: Bearer ...)");
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  auto handler = [this](const httplib::Request& req, httplib::Response& res) {
    send(routes_.handle(req.method, req.path, req.body, client_alive_probe(req)), res);
  };
  // Bodies are read here, not by httplib, so that the size limit holds for every transfer
  // encoding while the body arrives (httplib 0.11 checks it only against Content-Length).
  auto reading_handler = [this](const httplib::Request& req, httplib::Response& res,
                                const httplib::ContentReader& read) {
    // With a Content-Length (checked against the limit already) the body gets one allocation of
    // its size. A chunked body's size is unknown: it goes into 1 MiB blocks, joined at the end,
    // so that a refused upload peaks at the limit plus one block, not at the 1.5-2x of a string
    // that doubles its capacity by copying (blocks this large are mapped and unmapped whole, so
    // the memory also goes back to the system).
    constexpr size_t kBlock = size_t{1} << 20;
    std::string body;
    std::vector<std::string> blocks;
    size_t total = 0;
    bool over = false;
    const std::string* length = header(req, "Content-Length");
    if (length != nullptr) body.reserve(std::stoull(*length));
    const bool complete = read([&](const char* data, size_t size) {
      if (size > options_.max_body_bytes - total) {
        over = true;
        return false;
      }
      total += size;
      if (length != nullptr) {
        body.append(data, size);
        return true;
      }
      while (size > 0) {
        if (blocks.empty() || blocks.back().size() == kBlock) blocks.emplace_back().reserve(kBlock);
        const size_t n = std::min(size, kBlock - blocks.back().size());
        blocks.back().append(data, n);
        data += n;
        size -= n;
      }
      return true;
    });
    if (!over && !blocks.empty()) {
      body.reserve(total);
      for (std::string& block : blocks) {
        body += block;
        std::string().swap(block);
      }
    }
    if (over) {
      send_and_close(
          req,
          routes_.error(413, fmt::format("request body over {} bytes", options_.max_body_bytes)),
          res);
      return;
    }
    if (!complete) {
      send_and_close(req, routes_.error(400, "malformed or incomplete request body"), res);
      return;
    }
    send(routes_.handle(req.method, req.path, body, client_alive_probe(req)), res);
  };
  s.Get(R"(/.*)", handler);
  s.Post(R"(/.*)", reading_handler);
  s.Put(R"(/.*)", reading_handler);
  s.Patch(R"(/.*)", reading_handler);
  s.Delete(R"(/.*)", reading_handler);
  s.set_exception_handler(
      [this](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
        std::string what = "unknown error";
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        log_warn("{} {}: {}", req.method, req.path, what);
        send(routes_.error(500, "internal error: " + what), res);
      });
  s.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    // Routing and transport errors httplib produced itself (no body set by a handler).
    if (!res.body.empty() || res.content_provider_) return;
    if (res.status == 413) {
      send(routes_.error(413, fmt::format("request body over {} bytes", options_.max_body_bytes)),
           res);
    } else if (res.status == 404 || res.status == 405) {
      send(routes_.error(404, fmt::format("no route {} {}", req.method, req.path)), res);
    } else if (res.status >= 400) {
      send(routes_.error(res.status, "bad request"), res);
    }
  });
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::bind() {
  httplib::Server& s = impl_->server;
  if (options_.port == 0) {
    port_ = s.bind_to_any_port(options_.host);
    if (port_ <= 0) fail("serve: cannot bind {} (any port)", options_.host);
  } else {
    if (!s.bind_to_port(options_.host, options_.port))
      fail("serve: cannot listen on {}:{}: {}", options_.host, options_.port,
           bind_failure(options_.host, options_.port));
    port_ = options_.port;
  }
  return port_;
}

void HttpServer::run() {
  if (!impl_->stop_requested) impl_->server.listen_after_bind();
}

void HttpServer::stop() {
  if (!impl_) return;
  impl_->stop_requested = true;
  // httplib's stop() acts only while its loop runs; a stop() that lands between run()'s check and
  // the loop's start is lost, so a caller that must be sure calls stop() again (it is idempotent).
  if (impl_->server.is_running() && !impl_->listener_closed.exchange(true)) impl_->server.stop();
}

int HttpServer::drop_connections() {
  // httplib keeps no list of its connections; they are the process's sockets connected on the
  // server's port (the listening socket, closed by stop(), has no peer).
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  int dropped = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    const int fd = std::atoi(entry->d_name);
    if (is_socket_on_port(fd, port_) && shutdown(fd, SHUT_RDWR) == 0) ++dropped;
  }
  closedir(dir);
  return dropped;
}

}  // namespace minimax
