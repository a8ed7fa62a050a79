// The bytes of one streamed reply on their way from the worker that produces them to the event
// loop that writes them (serve/http_server.cc). The worker only appends, so it never blocks on a
// socket: a client that stops reading costs its own buffer, not a worker, and the loop cuts it
// once it is too far behind (max_backlog unsent bytes) or makes no progress for too long.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

namespace minimax {

class StreamBuffer {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Send { kDrained, kBlocked, kFailed };

  explicit StreamBuffer(size_t max_backlog) : max_backlog_(max_backlog) {}

  // Worker: queues `bytes`; false once the stream is cut, and cuts it when the unsent bytes
  // would pass max_backlog (the client is that far behind).
  bool append(std::string_view bytes);
  // Loop: writes what it can to `fd` without blocking.
  Send send_to(int fd);
  // Loop: no more bytes are taken; the worker's next append() returns false.
  void cut();
  bool is_cut() const;
  // Unsent bytes, and when a byte was last written (or the stream started).
  size_t backlog() const;
  Clock::time_point last_progress() const;
  // Loop, after the worker is done: the unsent bytes, leaving the buffer empty.
  std::string take_unsent();

 private:
  mutable std::mutex mutex_;
  const size_t max_backlog_;
  std::string bytes_;
  size_t sent_ = 0;  // bytes_[0, sent_) are written
  bool cut_ = false;
  Clock::time_point last_progress_ = Clock::now();
};

}  // namespace minimax
