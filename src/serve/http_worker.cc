// A transport worker's request and its way back to the loop (serve/http_worker.h).
#include "serve/http_worker.h"

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/log.h"
#include "serve/http_reply.h"

namespace minimax {
namespace {

// Whether the client of `fd` is still connected: one non-blocking peek.
bool peer_connected(int fd) {
  char byte;
  const ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n > 0) return true;  // a pipelined request: still connected
  if (n == 0) return false;
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

// Writes a streamed reply into `stream`: its head, its pieces as chunks, the last chunk. False
// once the stream is cut (the client is gone or too slow).
bool write_stream(const HttpReply& reply, bool close, std::string_view cors, StreamBuffer& stream,
                  int fd, LoopMailbox& mailbox) {
  auto append = [&](std::string_view bytes) {
    const bool ok = stream.append(bytes);
    if (ok) mailbox.stream_ready(fd);
    return ok;
  };
  bool ok = append(reply_head(reply.status, reply.content_type, close,
                              "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n" +
                                  std::string(cors) + reply.headers) +
                   "\r\n");
  const ChunkWrite write = [&](std::string_view data) {
    if (ok && !data.empty()) ok = append(fmt::format("{:x}\r\n{}\r\n", data.size(), data));
    return ok;
  };
  reply.stream(write);  // even after a failed head: the stream cancels its work on `false`
  return ok && append("0\r\n\r\n");
}

std::string current_exception_text() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

}  // namespace

LoopMailbox::LoopMailbox() {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) fail("serve: cannot create the event loop: {}", strerror(errno));
}

LoopMailbox::~LoopMailbox() { close(wake_fd_); }

void LoopMailbox::wake() {
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

void LoopMailbox::clear_wake() {
  uint64_t count;
  (void)!read(wake_fd_, &count, sizeof(count));
}

void LoopMailbox::post(Completion done) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    completions_.push_back(std::move(done));
  }
  wake();
}

void LoopMailbox::stream_ready(int fd) {
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    first = streams_ready_.empty();
    streams_ready_.push_back(fd);
  }
  if (first) wake();  // later ones ride on the same wake-up
}

void LoopMailbox::take(std::vector<Completion>& done, std::vector<int>& streams) {
  std::lock_guard<std::mutex> lock(mutex_);
  done.swap(completions_);
  streams.swap(streams_ready_);
}

void serve_request(HttpRoutes& routes, int fd, const RequestContext& context,
                   const std::string& body, StreamBuffer& stream, const std::atomic<bool>& stopping,
                   LoopMailbox& mailbox) {
  const HttpHead& head = context.head;
  const bool close = !head.keep_alive || stopping;
  const bool head_only = head.method == "HEAD";
  const ClientAlive alive = [fd, &stream] { return !stream.is_cut() && peer_connected(fd); };
  Completion done{fd, "", close};
  HttpReply reply;
  int status = 500;
  try {
    reply = routes.handle(head_only ? "GET" : head.method, head.path, body, alive);
    status = reply.status;
    if (reply.stream) {
      done.streamed = true;
      done.close = !write_stream(reply, close, context.cors, stream, fd, mailbox) || close;
    } else {
      done.bytes = whole_reply(reply, close, head_only, context.cors);
    }
  } catch (...) {
    const std::string what = current_exception_text();
    log_warn("{} {}: {}", head.method, head.path, what);
    done.close = close || static_cast<bool>(reply.stream);  // a stream may be partly sent
    if (!reply.stream)
      done.bytes = whole_reply(routes.error(head.path, 500, "internal error: " + what), close,
                               head_only, context.cors);
  }
  // Written once the reply is (a stream: once its last chunk is queued), so the duration is the
  // whole request's and a stream's tokens are all counted.
  log_request(RequestRecord{context.peer, head.method, head.path, status, context.start,
                            std::chrono::steady_clock::now(), reply.stats.get(), false});
  mailbox.post(std::move(done));
}

}  // namespace minimax
