// The event-driven transport behind serve/http_server.h. One thread runs an epoll loop over
// non-blocking sockets: it accepts, reads request heads and bodies (serve/http_request.h) and
// writes non-streamed replies, so a connection that sends or reads slowly costs a socket and a
// few buffers, never a thread. Only complete requests go to a fixed pool of workers that run the
// routes. A streamed reply's worker appends its pieces to a buffer that the loop writes
// (serve/stream_buffer.h), so a client that stops reading never holds a worker in a blocked
// write: it is cut once 1 MiB behind or 30 s without progress. /health and /metrics are answered
// by the loop itself (RouteAccess::at_once), so they never wait behind requests.
#include "serve/http_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "serve/http_reply.h"
#include "serve/http_request.h"
#include "serve/stream_buffer.h"

namespace minimax {

bool bearer_matches(std::string_view authorization, std::string_view api_key) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.substr(0, kBearer.size()) != kBearer) return false;
  return key_matches(authorization.substr(kBearer.size()), api_key);
}

bool key_matches(std::string_view given, std::string_view api_key) {
  unsigned char diff = given.size() == api_key.size() ? 0 : 1;
  for (size_t i = 0; i < api_key.size(); ++i)
    diff |= static_cast<unsigned char>(api_key[i]) ^
            static_cast<unsigned char>(i < given.size() ? given[i] : 0);
  return diff == 0;
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxHeadBytes = 64 << 10;  // request line and headers together
constexpr size_t kReadBytes = 64 << 10;     // one recv
constexpr auto kLinger = std::chrono::seconds(2);
// A streaming client this far behind, or this long without taking a byte while some wait, is cut
// and its request cancelled (docs/api.md "Transport").
constexpr size_t kMaxStreamBacklog = 1 << 20;
constexpr auto kStreamStall = std::chrono::seconds(30);

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

}  // namespace

// The loop's per-connection state. A named namespace, not an anonymous one: HttpServer::Impl
// holds these, and GCC warns when a class with linkage has members of internal-linkage types
// (-Wsubobject-linkage, which a unity build turns on for this file).
namespace http_server_state {

enum class Phase { kHead, kBody, kHandling, kWriting, kLingering };

struct Connection {
  int fd = -1;
  Phase phase = Phase::kHead;
  std::string in;   // received, not yet parsed
  std::string out;  // to send (loop-owned; a worker writes a streamed reply itself)
  size_t out_sent = 0;
  HttpHead head;
  std::optional<BodyReader> body;
  bool close_after_write = false;
  bool linger_after_write = false;       // the client may still be sending a body we did not read
  std::shared_ptr<StreamBuffer> stream;  // while a worker handles the request (kHandling)
  uint32_t events = 0;                   // the current epoll interest
  Clock::time_point last_activity = Clock::now();
};

// A worker's result, handed back to the loop: the reply to write, or (streamed) nothing left.
struct Completion {
  int fd;
  std::string bytes;
  bool close;
  bool streamed = false;  // the reply went through the connection's StreamBuffer
};

}  // namespace http_server_state

namespace {
using http_server_state::Completion;
using http_server_state::Connection;
using http_server_state::Phase;
}  // namespace

struct HttpServer::Impl {
  HttpRoutes& routes;
  const HttpServerOptions& options;
  int listen_fd = -1, epoll_fd = -1, wake_fd = -1;
  std::atomic<bool> stop_requested{false};
  std::unordered_map<int, std::unique_ptr<Connection>> connections;  // loop thread only
  std::mutex fds_mutex;                                              // guards open_fds
  std::unordered_set<int> open_fds;  // the connections' sockets, for drop_connections()
  std::mutex completions_mutex;
  std::vector<Completion> completions;
  std::vector<int> streams_ready;  // connections whose StreamBuffer has bytes to write
  std::mutex tasks_mutex;
  std::condition_variable tasks_ready;
  std::deque<std::function<void()>> tasks;
  bool workers_stop = false;
  std::optional<Clock::time_point> accept_paused_until;

  Impl(HttpRoutes& r, const HttpServerOptions& o) : routes(r), options(o) {
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epoll_fd < 0 || wake_fd < 0)
      fail("serve: cannot create the event loop: {}", strerror(errno));
  }
  ~Impl() {
    if (listen_fd >= 0) close(listen_fd);
    close(epoll_fd);
    close(wake_fd);
  }
  void wake() {
    const uint64_t one = 1;
    (void)!write(wake_fd, &one, sizeof(one));
  }

  // Sets what the loop waits for on `c`; none (0) takes the socket out of the epoll set, since
  // hang-ups are reported even to an empty interest and would wake the loop until the worker
  // handling the request notices them.
  void watch(Connection& c, uint32_t events) {
    if (c.events == events) return;
    epoll_event e{};
    e.events = events;
    e.data.fd = c.fd;
    const int op = events == 0 ? EPOLL_CTL_DEL : c.events == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    epoll_ctl(epoll_fd, op, c.fd, &e);
    c.events = events;
  }

  void close_connection(int fd) {
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    {
      std::lock_guard<std::mutex> lock(fds_mutex);
      open_fds.erase(fd);
    }
    close(fd);
    connections.erase(fd);
  }

  void accept_all() {
    for (int i = 0; i < 256; ++i) {
      const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: stop accepting for a moment instead of spinning on the listener.
          log_warn("serve: cannot accept a connection: {}", strerror(errno));
          epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
          accept_paused_until = Clock::now() + std::chrono::milliseconds(100);
        }
        return;
      }
      const int yes = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));  // SSE events go out at once
      auto c = std::make_unique<Connection>();
      c->fd = fd;
      c->events = EPOLLIN;
      epoll_event e{};
      e.events = EPOLLIN;
      e.data.fd = fd;
      epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &e);
      {
        std::lock_guard<std::mutex> lock(fds_mutex);
        open_fds.insert(fd);
      }
      connections[fd] = std::move(c);
    }
  }

  // Replies with the routes' error and, for every refusal that may leave a body unread, closes
  // the connection (after lingering: see flush()).
  void refuse(Connection& c, int status, const std::string& message,
              std::string_view extra_headers = "") {
    const bool body_pending = c.phase == Phase::kBody || c.head.body_expected();
    const bool close = body_pending || (status != 401 && status != 405) || !c.head.keep_alive;
    c.out += whole_reply(routes.error(c.head.path, status, message), close, false, extra_headers);
    c.phase = Phase::kWriting;
    c.close_after_write = close;
    c.linger_after_write = close;
    flush(c);
  }

  // Parses what has arrived: a head (checked for framing, method and key before any body byte
  // is read), then the body; a complete request goes to a worker.
  void advance(Connection& c) {
    if (c.phase == Phase::kHead) {
      if (stop_requested && c.in.empty()) return close_connection(c.fd);
      const HeadResult r = read_http_head(c.in, kMaxHeadBytes, options.max_body_bytes, c.head);
      if (r.refusal) return refuse(c, r.refusal->status, r.refusal->message);
      if (r.consumed == 0) return;
      c.in.erase(0, r.consumed);
      const RouteAccess access = routes.access(c.head.path);
      if (!access.methods.empty() && !method_listed(access.methods, c.head.method))
        return refuse(c, 405,
                      fmt::format("method {} is not allowed on {}", c.head.method, c.head.path),
                      fmt::format("Allow: {}\r\n", access.methods));
      // OPTIONS never needs the key: a browser's CORS preflight carries none. (The head reader
      // already refused a key header sent twice.)
      if (!options.api_key.empty() && access.needs_key && c.head.method != "OPTIONS") {
        const std::string* authorization = c.head.header("Authorization");
        const std::string* x_api_key = c.head.header("x-api-key");  // Anthropic's clients
        if (!(authorization != nullptr && bearer_matches(*authorization, options.api_key)) &&
            !(x_api_key != nullptr && key_matches(*x_api_key, options.api_key)))
          return refuse(c, 401,
                        "Invalid or missing API key (Authorization: Bearer ... or x-api-key)");
      }
      // Only now, with the request accepted, is the client told to send its body.
      if (c.head.expect_continue && c.head.body_expected())
        c.out += "HTTP/1.1 100 Continue\r\n\r\n";
      c.body.emplace(c.head, options.max_body_bytes);
      c.phase = Phase::kBody;
    }
    if (c.phase != Phase::kBody) return;
    switch (c.body->feed(c.in)) {
      case BodyReader::Step::kMore:
        if (c.out.size() > c.out_sent) return flush(c);  // the 100 Continue
        return watch(c, EPOLLIN);
      case BodyReader::Step::kRefused:
        return refuse(c, c.body->refusal().status, c.body->refusal().message);
      case BodyReader::Step::kDone:
        return dispatch(c);
    }
  }

  void dispatch(Connection& c) {
    c.out.clear();
    c.out_sent = 0;
    std::string body = c.body->take();
    c.body.reset();
    if (routes.access(c.head.path).at_once) return answer_at_once(c, body);  // methods checked
    c.phase = Phase::kHandling;
    watch(c, 0);  // nothing to read until the worker is done; a stream asks for EPOLLOUT
    c.stream = std::make_shared<StreamBuffer>(kMaxStreamBacklog);
    std::lock_guard<std::mutex> lock(tasks_mutex);
    tasks.emplace_back([this, fd = c.fd, head = c.head, body = std::move(body), stream = c.stream] {
      handle(fd, head, body, *stream);
    });
    tasks_ready.notify_one();
  }

  // A cheap route run on the loop: it never waits for a worker.
  void answer_at_once(Connection& c, const std::string& body) {
    const bool close = !c.head.keep_alive || stop_requested;
    const bool head_only = c.head.method == "HEAD";
    HttpReply reply;
    try {
      reply =
          routes.handle(head_only ? "GET" : c.head.method, c.head.path, body, [] { return true; });
    } catch (const std::exception& e) {
      reply = routes.error(c.head.path, 500, std::string("internal error: ") + e.what());
    }
    c.out = whole_reply(reply, close, head_only);
    c.phase = Phase::kWriting;
    c.close_after_write = close;
    c.linger_after_write = false;
    flush(c);
  }

  // Worker: the loop has bytes of `fd`'s stream to write.
  void stream_ready(int fd) {
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(completions_mutex);
      first = streams_ready.empty();
      streams_ready.push_back(fd);
    }
    if (first) wake();
  }

  // Loop: writes what a stream has without blocking; a client that fails is cut.
  void flush_stream(Connection& c) {
    if (!c.stream) return;
    switch (c.stream->send_to(c.fd)) {
      case StreamBuffer::Send::kDrained:
        return watch(c, 0);
      case StreamBuffer::Send::kBlocked:
        return watch(c, EPOLLOUT);
      case StreamBuffer::Send::kFailed:
        return cut_stream(c);
    }
  }

  // Ends a stream whose client is gone, too slow or too far behind: the worker's next write
  // fails and its request is cancelled. The socket is shut down, not closed, since the worker
  // still peeks at it; it closes when the worker's completion arrives.
  void cut_stream(Connection& c) {
    c.stream->cut();
    shutdown(c.fd, SHUT_RDWR);
    watch(c, 0);
  }

  // Runs on a worker: the routes produce the reply; a stream is written here, a whole reply goes
  // back to the loop. The socket stays open until the loop has the completion.
  void handle(int fd, const HttpHead& head, const std::string& body, StreamBuffer& stream) {
    const bool close = !head.keep_alive || stop_requested;
    const bool head_only = head.method == "HEAD";
    const ClientAlive alive = [fd, &stream] {
      if (stream.is_cut()) return false;
      char byte;
      const ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n > 0) return true;  // a pipelined request: still connected
      if (n == 0) return false;
      return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    };
    Completion done{fd, "", close};
    HttpReply reply;
    try {
      reply = routes.handle(head_only ? "GET" : head.method, head.path, body, alive);
      if (reply.stream) {
        done.streamed = true;
        auto append = [&](std::string_view bytes) {
          const bool ok = stream.append(bytes);
          if (ok) stream_ready(fd);
          return ok;
        };
        bool ok = append(reply_head(reply.status, reply.content_type, close,
                                    "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n" +
                                        reply.headers) +
                         "\r\n");
        const ChunkWrite write = [&](std::string_view data) {
          if (ok && !data.empty()) ok = append(fmt::format("{:x}\r\n{}\r\n", data.size(), data));
          return ok;
        };
        reply.stream(write);  // even after a failed head: the stream cancels its work on `false`
        ok = ok && append("0\r\n\r\n");
        done.close = close || !ok;
      } else {
        done.bytes = whole_reply(reply, close, head_only);
      }
    } catch (...) {
      std::string what = "unknown error";
      try {
        throw;
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      log_warn("{} {}: {}", head.method, head.path, what);
      done.close = close || static_cast<bool>(reply.stream);  // a stream may be partly sent
      if (!reply.stream)
        done.bytes =
            whole_reply(routes.error(head.path, 500, "internal error: " + what), close, head_only);
    }
    {
      std::lock_guard<std::mutex> lock(completions_mutex);
      completions.push_back(std::move(done));
    }
    wake();
  }

  void complete(Completion& done) {
    auto it = connections.find(done.fd);
    if (it == connections.end()) return;
    Connection& c = *it->second;
    c.last_activity = Clock::now();
    c.close_after_write = done.close || stop_requested;
    c.linger_after_write = false;
    std::shared_ptr<StreamBuffer> stream = std::move(c.stream);
    if (done.streamed) {
      // What the loop has not written yet is written as a whole reply's tail would be.
      if (stream->is_cut()) return close_connection(c.fd);
      done.bytes = stream->take_unsent();
      if (done.bytes.empty()) {
        if (c.close_after_write) return close_connection(c.fd);
        c.phase = Phase::kHead;
        watch(c, EPOLLIN);
        return advance(c);
      }
    }
    c.out = std::move(done.bytes);
    c.out_sent = 0;
    c.phase = Phase::kWriting;
    flush(c);
  }

  // Writes what is pending without blocking. A finished reply returns the connection to reading
  // the next request, or closes it; a refusal that left a body unread first sends FIN and
  // discards what the client still sends for up to 2 s, so that an uploading client sees the
  // reply rather than a reset.
  void flush(Connection& c) {
    while (c.out_sent < c.out.size()) {
      const ssize_t n = send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c.out_sent += static_cast<size_t>(n);
        c.last_activity = Clock::now();
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        watch(c, c.phase == Phase::kWriting ? EPOLLOUT : EPOLLIN | EPOLLOUT);
        return;
      } else {
        return close_connection(c.fd);
      }
    }
    c.out.clear();
    c.out_sent = 0;
    if (c.phase != Phase::kWriting) return watch(c, EPOLLIN);
    if (c.close_after_write && c.linger_after_write) {
      shutdown(c.fd, SHUT_WR);
      c.phase = Phase::kLingering;
      c.in.clear();
      c.last_activity = Clock::now();
      watch(c, EPOLLIN);
      return;
    }
    if (c.close_after_write) return close_connection(c.fd);
    c.phase = Phase::kHead;
    watch(c, EPOLLIN);
    advance(c);  // a pipelined request may be waiting in `in` already
  }

  void readable(Connection& c) {
    char buffer[kReadBytes];
    const ssize_t n = recv(c.fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) return close_connection(c.fd);  // closed, reset, or shut down by a drop
    if (c.phase == Phase::kLingering) return;   // discarded
    c.last_activity = Clock::now();
    c.in.append(buffer, static_cast<size_t>(n));
    advance(c);
  }

  void on_event(int fd, uint32_t events) {
    auto it = connections.find(fd);
    if (it == connections.end()) return;
    Connection& c = *it->second;
    if (c.phase == Phase::kHandling) {  // only a stream asks for events while a worker runs
      if (events & (EPOLLHUP | EPOLLERR)) return cut_stream(c);
      if (events & EPOLLOUT) flush_stream(c);
      return;
    }
    if ((events & EPOLLOUT) && c.out.size() > c.out_sent) {
      flush(c);
      if (connections.find(fd) == connections.end()) return;  // closed by flush
    }
    if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) &&
        (c.phase == Phase::kHead || c.phase == Phase::kBody || c.phase == Phase::kLingering))
      readable(c);
    else if ((events & (EPOLLHUP | EPOLLERR)) && c.phase == Phase::kWriting)
      close_connection(fd);
  }

  // Closes connections that stalled (no byte read or written for the read timeout), ends
  // lingering, resumes a paused listener, and, once stopping, closes connections with no
  // request in progress.
  void sweep() {
    const auto now = Clock::now();
    if (accept_paused_until && now >= *accept_paused_until && listen_fd >= 0) {
      epoll_event e{};
      e.events = EPOLLIN;
      e.data.fd = listen_fd;
      epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &e);
      accept_paused_until.reset();
    }
    std::vector<int> expired;
    for (const auto& [fd, c] : connections) {
      const bool lingered = c->phase == Phase::kLingering && now - c->last_activity > kLinger;
      const bool stalled =
          c->phase != Phase::kHandling && c->phase != Phase::kLingering &&
          now - c->last_activity > std::chrono::seconds(options.read_timeout_seconds);
      const bool idle = stop_requested && c->phase == Phase::kHead && c->in.empty() &&
                        c->out.size() == c->out_sent;
      if (lingered || stalled || idle) expired.push_back(fd);
      if (c->phase == Phase::kHandling && c->stream && !c->stream->is_cut() &&
          c->stream->backlog() > 0 && now - c->stream->last_progress() > kStreamStall)
        cut_stream(*c);
    }
    for (const int fd : expired) close_connection(fd);
  }

  void work() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(tasks_mutex);
        tasks_ready.wait(lock, [this] { return workers_stop || !tasks.empty(); });
        if (tasks.empty()) return;
        task = std::move(tasks.front());
        tasks.pop_front();
      }
      task();
    }
  }

  void loop() {
    std::vector<std::thread> workers;
    for (size_t i = 0; i < std::max<size_t>(options.threads, 1); ++i)
      workers.emplace_back([this] { work(); });
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = wake_fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &e);
    e.data.fd = listen_fd;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &e);
    std::vector<epoll_event> ready(256);
    auto last_sweep = Clock::now();
    for (;;) {
      if (stop_requested && listen_fd >= 0) {  // stop accepting; let open requests finish
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
        close(listen_fd);
        listen_fd = -1;
        sweep();
      }
      if (listen_fd < 0 && connections.empty()) break;
      const int n = epoll_wait(epoll_fd, ready.data(), static_cast<int>(ready.size()), 100);
      for (int i = 0; i < n; ++i) {
        const int fd = ready[i].data.fd;
        if (fd == listen_fd) {
          accept_all();
        } else if (fd == wake_fd) {
          uint64_t count;
          (void)!read(wake_fd, &count, sizeof(count));
        } else {
          on_event(fd, ready[i].events);
        }
      }
      std::vector<Completion> done;
      std::vector<int> streaming;
      {
        std::lock_guard<std::mutex> lock(completions_mutex);
        done.swap(completions);
        streaming.swap(streams_ready);
      }
      for (const int fd : streaming)
        if (auto it = connections.find(fd);
            it != connections.end() && it->second->phase == Phase::kHandling)
          flush_stream(*it->second);
      for (Completion& d : done) complete(d);
      if (Clock::now() - last_sweep > std::chrono::milliseconds(100)) {
        sweep();
        last_sweep = Clock::now();
      }
    }
    {
      std::lock_guard<std::mutex> lock(tasks_mutex);
      workers_stop = true;
    }
    tasks_ready.notify_all();
    for (std::thread& t : workers) t.join();
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
  impl_->wake();
}

int HttpServer::drop_connections() {
  std::lock_guard<std::mutex> lock(impl_->fds_mutex);
  int dropped = 0;
  for (const int fd : impl_->open_fds)
    if (shutdown(fd, SHUT_RDWR) == 0) ++dropped;
  return dropped;
}

}  // namespace minimax
