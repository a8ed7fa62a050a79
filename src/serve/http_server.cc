// cpp-httplib behind serve/http_server.h; the only file that includes httplib.h.
#include "serve/http_server.h"

// httplib.h: Debian's libcpp-httplib sends without MSG_NOSIGNAL: whoever runs a server must ignore
// SIGPIPE (serve_cmd.cc and the tests do), or a vanished client kills the process.
#include <dirent.h>
#include <httplib.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>

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

}  // namespace

HttpServer::HttpServer(HttpRoutes& routes, HttpServerOptions options)
    : impl_(std::make_unique<Impl>()), routes_(routes), options_(std::move(options)) {
  httplib::Server& s = impl_->server;
  const size_t threads = options_.threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.set_payload_max_length(options_.max_body_bytes);
  s.set_read_timeout(options_.read_timeout_seconds, 0);
  s.set_keep_alive_max_count(1000);

  auto handler = [this](const httplib::Request& req, httplib::Response& res) {
    if (!options_.api_key.empty() && req.path.rfind("/v1/", 0) == 0 &&
        !bearer_matches(req.get_header_value("Authorization"), options_.api_key)) {
      send(routes_.error(401, "Invalid or missing API key (Authorization: Bearer ...)"), res);
      return;
    }
    send(routes_.handle(req.method, req.path, req.body, client_alive_probe(req)), res);
  };
  s.Get(R"(/.*)", handler);
  s.Post(R"(/.*)", handler);
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
    if (!res.body.empty() || res.is_chunked_content_provider_) return;
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
      fail("serve: cannot bind {}:{} (in use, or not an address of this machine)", options_.host,
           options_.port);
    port_ = options_.port;
  }
  return port_;
}

void HttpServer::run() { impl_->server.listen_after_bind(); }

void HttpServer::stop() {
  if (impl_ && impl_->server.is_running()) impl_->server.stop();
}

}  // namespace minimax
