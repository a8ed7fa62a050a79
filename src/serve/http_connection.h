// The transport's connections and their state machine (internal to src/serve), run on the event
// loop's thread: a connection reads a head (checked by serve/http_gate.h before any body byte),
// then its body; the complete request goes to a worker (or, for an at-once route, is answered on
// the loop); the reply is written without blocking; then the connection reads the next request
// or closes. A refusal that leaves a body unread lingers before closing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "serve/http_request.h"
#include "serve/http_server.h"
#include "serve/http_worker.h"
#include "serve/stream_buffer.h"
#include "serve/worker_pool.h"

namespace minimax {

// A named namespace, not an anonymous one: Connections holds these, and GCC warns when a class
// with linkage has members of internal-linkage types (-Wsubobject-linkage, which a unity build
// turns on).
namespace http_connection {

using Clock = std::chrono::steady_clock;

enum class Phase { kHead, kBody, kHandling, kWriting, kLingering };

struct Connection {
  int fd = -1;
  Phase phase = Phase::kHead;
  std::string in;   // received, not yet parsed
  std::string out;  // to send (loop-owned; a worker writes a streamed reply itself)
  size_t out_sent = 0;
  HttpHead head;
  std::string peer;                 // the client's "address:port", for the request log
  Clock::time_point request_start;  // when the current request's head was complete
  std::string cors;                 // CORS header lines for replies to the current request
  RouteAccess access;               // what the routes said of head.path when the head was checked
  std::optional<BodyReader> body;
  bool close_after_write = false;
  bool linger_after_write = false;       // the client may still be sending a body we did not read
  std::shared_ptr<StreamBuffer> stream;  // while a worker handles the request (kHandling)
  uint32_t events = 0;                   // the current epoll interest
  Clock::time_point last_activity = Clock::now();
};

}  // namespace http_connection

class Connections {
 public:
  using Clock = http_connection::Clock;

  // `epoll_fd` is the loop's; `stopping` is set once the server stops (connections with no
  // request in progress close, replies say "Connection: close").
  Connections(HttpRoutes& routes, const HttpServerOptions& options, int epoll_fd,
              WorkerPool& workers, LoopMailbox& mailbox, const std::atomic<bool>& stopping);

  // A connection accepted on `fd` (non-blocking) from `peer` ("address:port").
  void add(int fd, std::string peer);
  // epoll reported `events` on `fd`.
  void on_event(int fd, uint32_t events);
  // A worker finished a request.
  void complete(Completion& done);
  // A worker appended to `fd`'s stream.
  void stream_ready(int fd);
  // Closes connections that stalled (no byte read or written for the read timeout), ends
  // lingering, cuts streams that made no progress, and, once stopping, closes connections with
  // no request in progress.
  void sweep();
  bool empty() const { return connections_.empty(); }
  // Any thread: shuts down every open socket; returns how many.
  int drop_all();

 private:
  using Connection = http_connection::Connection;

  void watch(Connection& c, uint32_t events);
  void close_connection(int fd);
  void refuse(Connection& c, int status, std::string_view message,
              std::string_view extra_headers = "");
  void advance(Connection& c);
  void dispatch(Connection& c);
  void answer_at_once(Connection& c, const std::string& body);
  void answer_preflight(Connection& c, const std::string& headers);
  void log(const Connection& c, int status) const;
  void flush_stream(Connection& c);
  void cut_stream(Connection& c);
  void flush(Connection& c);
  void readable(Connection& c);

  HttpRoutes& routes_;
  const HttpServerOptions& options_;
  const int epoll_fd_;
  WorkerPool& workers_;
  LoopMailbox& mailbox_;
  const std::atomic<bool>& stopping_;
  std::unordered_map<int, std::unique_ptr<Connection>> connections_;  // loop thread only
  std::mutex fds_mutex_;                                              // guards open_fds_
  std::unordered_set<int> open_fds_;  // the connections' sockets, for drop_all()
};

}  // namespace minimax
