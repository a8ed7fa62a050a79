// The transport's connection state machine (serve/http_connection.h).
#include "serve/http_connection.h"

#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "serve/http_gate.h"
#include "serve/http_reply.h"

namespace minimax {
namespace {

using http_connection::Phase;

constexpr size_t kMaxHeadBytes = 64 << 10;  // request line and headers together
constexpr size_t kReadBytes = 64 << 10;     // one recv
// How long a refused upload's connection discards what the client still sends before closing.
constexpr auto kLinger = std::chrono::seconds(2);
// A streaming client this far behind, or this long without taking a byte while some wait, is cut
// and its request cancelled (docs/api.md "Transport").
constexpr size_t kMaxStreamBacklog = 1 << 20;
constexpr auto kStreamStall = std::chrono::seconds(30);

}  // namespace

Connections::Connections(HttpRoutes& routes, const HttpServerOptions& options, int epoll_fd,
                         WorkerPool& workers, LoopMailbox& mailbox,
                         const std::atomic<bool>& stopping)
    : routes_(routes),
      options_(options),
      epoll_fd_(epoll_fd),
      workers_(workers),
      mailbox_(mailbox),
      stopping_(stopping) {}

void Connections::add(int fd, std::string peer) {
  auto c = std::make_unique<Connection>();
  c->fd = fd;
  c->peer = std::move(peer);
  watch(*c, EPOLLIN);
  {
    std::lock_guard<std::mutex> lock(fds_mutex_);
    open_fds_.insert(fd);
  }
  connections_[fd] = std::move(c);
}

int Connections::drop_all() {
  std::lock_guard<std::mutex> lock(fds_mutex_);
  int dropped = 0;
  for (const int fd : open_fds_)
    if (shutdown(fd, SHUT_RDWR) == 0) ++dropped;
  return dropped;
}

// Sets what the loop waits for on `c`; none (0) takes the socket out of the epoll set, since
// hang-ups are reported even to an empty interest and would wake the loop until the worker
// handling the request notices them.
void Connections::watch(Connection& c, uint32_t events) {
  if (c.events == events) return;
  epoll_event e{};
  e.events = events;
  e.data.fd = c.fd;
  const int op = events == 0 ? EPOLL_CTL_DEL : c.events == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  epoll_ctl(epoll_fd_, op, c.fd, &e);
  c.events = events;
}

void Connections::close_connection(int fd) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  {
    std::lock_guard<std::mutex> lock(fds_mutex_);
    open_fds_.erase(fd);
  }
  close(fd);
  connections_.erase(fd);
}

// Replies with the routes' error and, for every refusal that may leave a body unread, closes
// the connection (after lingering: see flush()).
void Connections::refuse(Connection& c, int status, std::string_view message,
                         std::string_view extra_headers) {
  const bool body_pending = c.phase == Phase::kBody || c.head.body_expected();
  const bool close = body_pending || (status != 401 && status != 405) || !c.head.keep_alive;
  // The CORS headers too, so that a browser app can read why it was refused (a 401 above all).
  c.out += whole_reply(routes_.error(c.head.path, status, message), close, false,
                       std::string(extra_headers) + c.cors);
  log(c, status);
  c.phase = Phase::kWriting;
  c.close_after_write = close;
  c.linger_after_write = close;
  flush(c);
}

// Parses what has arrived: a head (checked for framing, method and key before any body byte is
// read), then the body; a complete request goes to a worker.
void Connections::advance(Connection& c) {
  if (c.phase == Phase::kHead) {
    if (stopping_ && c.in.empty()) return close_connection(c.fd);
    c.head = HttpHead{};  // a refused head is logged with what was read of it, not the last one's
    c.cors.clear();
    c.access = RouteAccess{};
    c.request_start = Clock::now();
    const HeadResult r = read_http_head(c.in, kMaxHeadBytes, options_.max_body_bytes, c.head);
    if (r.refusal) return refuse(c, r.refusal->status, r.refusal->message);
    if (r.consumed == 0) return;
    c.in.erase(0, r.consumed);
    c.access = routes_.access(c.head.path);
    c.cors = cors_reply_headers(options_.cors, c.head);
    // A preflight is answered here, before the method and key checks: OPTIONS is in no route's
    // list and a browser sends no key with it.
    if (!c.access.methods.empty())
      if (auto preflight = cors_preflight_headers(options_.cors, c.head, c.access.methods))
        return answer_preflight(c, *preflight);
    if (const auto refused = check_head(c.head, c.access, options_.api_key))
      return refuse(c, refused->status, refused->message, refused->extra_headers);
    // Only now, with the request accepted, is the client told to send its body.
    if (c.head.expect_continue && c.head.body_expected()) c.out += "HTTP/1.1 100 Continue\r\n\r\n";
    c.body.emplace(c.head, options_.max_body_bytes);
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

void Connections::dispatch(Connection& c) {
  c.out.clear();
  c.out_sent = 0;
  std::string body = c.body->take();
  c.body.reset();
  if (c.access.at_once) return answer_at_once(c, body);  // its methods were checked with the head
  c.phase = Phase::kHandling;
  watch(c, 0);  // nothing to read until the worker is done; a stream asks for EPOLLOUT
  c.stream = std::make_shared<StreamBuffer>(kMaxStreamBacklog);
  RequestContext context{c.head, c.peer, c.cors, c.request_start};
  workers_.post(
      [this, fd = c.fd, context = std::move(context), body = std::move(body), stream = c.stream] {
        serve_request(routes_, fd, context, body, *stream, stopping_, mailbox_);
      });
}

// A cheap route run on the loop: it never waits for a worker.
void Connections::answer_at_once(Connection& c, const std::string& body) {
  const bool close = !c.head.keep_alive || stopping_;
  const bool head_only = c.head.method == "HEAD";
  HttpReply reply;
  try {
    reply =
        routes_.handle(head_only ? "GET" : c.head.method, c.head.path, body, [] { return true; });
  } catch (const std::exception& e) {
    reply = routes_.error(c.head.path, 500, std::string("internal error: ") + e.what());
  }
  c.out = whole_reply(reply, close, head_only, c.cors);
  c.phase = Phase::kWriting;
  c.close_after_write = close;
  c.linger_after_write = false;
  log(c, reply.status);
  flush(c);
}

// 204 with the CORS headers. A preflight has no body; one that announces one anyway is not read,
// so the connection closes after the reply (lingering, as a refusal's does).
void Connections::answer_preflight(Connection& c, const std::string& headers) {
  const bool body_pending = c.head.body_expected();
  const bool close = body_pending || !c.head.keep_alive || stopping_;
  c.out += fmt::format("HTTP/1.1 204 No Content\r\n{}{}\r\n", close ? "Connection: close\r\n" : "",
                       headers);
  c.phase = Phase::kWriting;
  c.close_after_write = close;
  c.linger_after_write = body_pending;
  log(c, 204);
  flush(c);
}

// The request's line in the log: routes answered on the loop (/health, /metrics, what monitors
// poll) at debug level only.
void Connections::log(const Connection& c, int status) const {
  log_request(RequestRecord{c.peer, c.head.method, c.head.path, status, c.request_start,
                            Clock::now(), nullptr, c.access.at_once && status < 400});
}

void Connections::stream_ready(int fd) {
  if (auto it = connections_.find(fd);
      it != connections_.end() && it->second->phase == Phase::kHandling)
    flush_stream(*it->second);
}

// Writes what a stream has without blocking; a client that fails is cut.
void Connections::flush_stream(Connection& c) {
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

// Ends a stream whose client is gone, too slow or too far behind: the worker's next write fails
// and its request is cancelled. The socket is shut down, not closed, since the worker still
// peeks at it; it closes when the worker's completion arrives.
void Connections::cut_stream(Connection& c) {
  c.stream->cut();
  shutdown(c.fd, SHUT_RDWR);
  watch(c, 0);
}

void Connections::complete(Completion& done) {
  auto it = connections_.find(done.fd);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  c.last_activity = Clock::now();
  c.close_after_write = done.close || stopping_;
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
// the next request, or closes it; a refusal that left a body unread first sends FIN and discards
// what the client still sends for kLinger, so that an uploading client sees the reply rather than
// a reset.
void Connections::flush(Connection& c) {
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

void Connections::readable(Connection& c) {
  char buffer[kReadBytes];
  const ssize_t n = recv(c.fd, buffer, sizeof(buffer), MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) return close_connection(c.fd);  // closed, reset, or shut down by a drop
  if (c.phase == Phase::kLingering) return;   // discarded
  c.last_activity = Clock::now();
  c.in.append(buffer, static_cast<size_t>(n));
  advance(c);
}

void Connections::on_event(int fd, uint32_t events) {
  auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  if (c.phase == Phase::kHandling) {  // only a stream asks for events while a worker runs
    if (events & (EPOLLHUP | EPOLLERR)) return cut_stream(c);
    if (events & EPOLLOUT) flush_stream(c);
    return;
  }
  if ((events & EPOLLOUT) && c.out.size() > c.out_sent) {
    flush(c);
    if (connections_.find(fd) == connections_.end()) return;  // closed by flush
  }
  if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) &&
      (c.phase == Phase::kHead || c.phase == Phase::kBody || c.phase == Phase::kLingering))
    readable(c);
  else if ((events & (EPOLLHUP | EPOLLERR)) && c.phase == Phase::kWriting)
    close_connection(fd);
}

void Connections::sweep() {
  const auto now = Clock::now();
  const auto read_timeout = std::chrono::seconds(options_.read_timeout_seconds);
  std::vector<int> expired;
  for (const auto& [fd, c] : connections_) {
    const bool lingered = c->phase == Phase::kLingering && now - c->last_activity > kLinger;
    const bool stalled = c->phase != Phase::kHandling && c->phase != Phase::kLingering &&
                         now - c->last_activity > read_timeout;
    const bool idle =
        stopping_ && c->phase == Phase::kHead && c->in.empty() && c->out.size() == c->out_sent;
    if (lingered || stalled || idle) expired.push_back(fd);
    if (c->phase == Phase::kHandling && c->stream && !c->stream->is_cut() &&
        c->stream->backlog() > 0 && now - c->stream->last_progress() > kStreamStall)
      cut_stream(*c);
  }
  for (const int fd : expired) close_connection(fd);
}

}  // namespace minimax
