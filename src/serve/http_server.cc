// The event loop behind serve/http_server.h: the listener and one thread running epoll over it,
// the connections' sockets (serve/http_connection.h) and the workers' wake-ups
// (serve/http_worker.h). Non-blocking sockets throughout, so a connection that sends or reads
// slowly costs a socket and a few buffers, never a thread; only complete requests go to the fixed
// pool of workers (serve/worker_pool.h) that run the routes. /health and /metrics are answered
// by the loop itself (RouteAccess::at_once), so they never wait behind requests.
#include "serve/http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "serve/http_connection.h"
#include "serve/http_worker.h"
#include "serve/worker_pool.h"

namespace minimax {
namespace {

using Clock = std::chrono::steady_clock;
// Connections accepted per wake-up of the listener: under a flood of connects the loop still
// gets to the open connections' events between batches.
constexpr int kAcceptsPerWake = 256;
constexpr int kEventsPerWait = 256;  // epoll events taken per wait
// The longest the loop sleeps in epoll_wait with nothing to do, so that it notices stop() and
// runs the sweep on time.
constexpr int kWaitTimeoutMs = 100;
// How often the loop sweeps the connections for timeouts (the read timeout, lingering, stalled
// streams): their limits are seconds, so a tenth of one is precise enough.
constexpr auto kSweepPeriod = std::chrono::milliseconds(100);
// How long the listener rests when the process is out of descriptors, instead of spinning on it.
constexpr auto kAcceptPause = std::chrono::milliseconds(100);

// Lets this process hold as many sockets as its hard limit allows: each open connection is one
// descriptor, and the default soft limit (often 1024) would refuse connections long before
// memory or the loop would.
void raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// "127.0.0.1:51234", "[::1]:51234": the client as the request log names it.
std::string peer_name(const sockaddr_storage& address, socklen_t length) {
  char host[NI_MAXHOST] = "", port[NI_MAXSERV] = "";
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof(host), port,
                  sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "-";
  return address.ss_family == AF_INET6 ? fmt::format("[{}]:{}", host, port)
                                       : fmt::format("{}:{}", host, port);
}

}  // namespace

struct HttpServer::Impl {
  const HttpServerOptions& options;
  int listen_fd = -1, epoll_fd = -1;
  std::atomic<bool> stop_requested{false};
  LoopMailbox mailbox;
  WorkerPool workers;
  std::optional<Connections> connections;
  std::optional<Clock::time_point> accept_paused_until;

  Impl(HttpRoutes& routes, const HttpServerOptions& o) : options(o) {
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd < 0) fail("serve: cannot create the event loop: {}", strerror(errno));
    connections.emplace(routes, options, epoll_fd, workers, mailbox, stop_requested);
  }
  ~Impl() {
    if (listen_fd >= 0) close(listen_fd);
    close(epoll_fd);
  }

  void listen_to(int fd) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &e);
  }

  void accept_all() {
    for (int i = 0; i < kAcceptsPerWake; ++i) {
      sockaddr_storage peer{};
      socklen_t peer_length = sizeof(peer);
      const int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &peer_length,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          log_warn("serve: cannot accept a connection: {}", strerror(errno));
          epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
          accept_paused_until = Clock::now() + kAcceptPause;
        }
        return;
      }
      const int yes = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));  // SSE events go out at once
      connections->add(fd, peer_name(peer, peer_length));
    }
  }

  void sweep() {
    if (accept_paused_until && Clock::now() >= *accept_paused_until && listen_fd >= 0) {
      listen_to(listen_fd);
      accept_paused_until.reset();
    }
    connections->sweep();
  }

  // Takes what the workers posted: streams to write, finished requests.
  void take_mail() {
    std::vector<Completion> done;
    std::vector<int> streaming;
    mailbox.take(done, streaming);
    for (const int fd : streaming) connections->stream_ready(fd);
    for (Completion& d : done) connections->complete(d);
  }

  void loop() {
    workers.start(options.threads);
    listen_to(mailbox.wake_fd());
    listen_to(listen_fd);
    std::vector<epoll_event> ready(kEventsPerWait);
    auto last_sweep = Clock::now();
    for (;;) {
      if (stop_requested && listen_fd >= 0) {  // stop accepting; let open requests finish
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
        close(listen_fd);
        listen_fd = -1;
        sweep();
      }
      if (listen_fd < 0 && connections->empty()) break;
      const int n = epoll_wait(epoll_fd, ready.data(), kEventsPerWait, kWaitTimeoutMs);
      for (int i = 0; i < n; ++i) {
        const int fd = ready[i].data.fd;
        if (fd == listen_fd)
          accept_all();
        else if (fd == mailbox.wake_fd())
          mailbox.clear_wake();
        else
          connections->on_event(fd, ready[i].events);
      }
      take_mail();
      if (Clock::now() - last_sweep > kSweepPeriod) {
        sweep();
        last_sweep = Clock::now();
      }
    }
    workers.join();
  }
};

HttpServer::HttpServer(HttpRoutes& routes, HttpServerOptions options)
    : routes_(routes), options_(std::move(options)) {
  impl_ = std::make_unique<Impl>(routes_, options_);
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::bind() {
  raise_descriptor_limit();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(options_.port);
  const std::string where = options_.port == 0 ? options_.host + " (any port)"
                                               : fmt::format("{}:{}", options_.host, options_.port);
  if (const int rc = getaddrinfo(options_.host.c_str(), service.c_str(), &hints, &found); rc != 0)
    fail("serve: cannot listen on {}: {}", where, gai_strerror(rc));
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && impl_->listen_fd < 0; a = a->ai_next) {
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      why = strerror(errno);
      continue;
    }
    // SO_REUSEADDR only: a restarted server binds while old connections sit in TIME_WAIT, but a
    // second server on a port in use fails (SO_REUSEPORT would let it take half the connections).
    const int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
      impl_->listen_fd = fd;
    } else {
      why = strerror(errno);
      close(fd);
    }
  }
  freeaddrinfo(found);
  if (impl_->listen_fd < 0) fail("serve: cannot listen on {}: {}", where, why);
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&bound), &length);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                                            : reinterpret_cast<sockaddr_in&>(bound).sin_port);
  return port_;
}

void HttpServer::run() {
  if (!impl_->stop_requested && impl_->listen_fd >= 0) impl_->loop();
}

void HttpServer::stop() {
  if (!impl_) return;
  impl_->stop_requested = true;
  impl_->mailbox.wake();
}

int HttpServer::drop_connections() { return impl_->connections->drop_all(); }

}  // namespace minimax
