// What a transport worker does with one complete request, and how it hands the result back to
// the event loop (internal to src/serve). A whole reply goes back as bytes for the loop to write;
// a streamed reply is framed here (chunked transfer coding) into the connection's StreamBuffer,
// which the loop drains, so a worker never blocks on a socket.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "serve/http_request.h"
#include "serve/http_server.h"
#include "serve/stream_buffer.h"

namespace minimax {

// A worker's result, handed back to the loop: the reply to write, or (streamed) nothing left.
struct Completion {
  int fd;
  std::string bytes;
  bool close;
  bool streamed = false;  // the reply went through the connection's StreamBuffer
};

// The workers' side of the loop: completions and streams with bytes to write, and an eventfd the
// loop polls so that posting wakes it.
class LoopMailbox {
 public:
  LoopMailbox();
  ~LoopMailbox();
  LoopMailbox(const LoopMailbox&) = delete;
  LoopMailbox& operator=(const LoopMailbox&) = delete;

  int wake_fd() const { return wake_fd_; }
  void wake();
  // Loop: clears the wake-up after epoll reported it.
  void clear_wake();

  void post(Completion done);
  // `fd`'s StreamBuffer has bytes to write.
  void stream_ready(int fd);
  // Loop: takes what the workers posted since the last call.
  void take(std::vector<Completion>& done, std::vector<int>& streams);

 private:
  int wake_fd_ = -1;
  std::mutex mutex_;
  std::vector<Completion> completions_;
  std::vector<int> streams_ready_;
};

// What the loop knew of a request when it handed it to a worker.
struct RequestContext {
  HttpHead head;
  std::string peer;  // "address:port"
  std::string cors;  // header lines every reply carries (serve/cors.h)
  std::chrono::steady_clock::time_point start;
};

// Runs on a worker: the routes answer the request on `fd` (HEAD as GET without the body); the
// completion goes to `mailbox`, and the request's line to the log. The socket stays open until
// the loop has the completion, since the request's ClientAlive peeks at it.
void serve_request(HttpRoutes& routes, int fd, const RequestContext& context,
                   const std::string& body, StreamBuffer& stream, const std::atomic<bool>& stopping,
                   LoopMailbox& mailbox);

}  // namespace minimax
