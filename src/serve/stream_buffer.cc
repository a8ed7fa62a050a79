// A streamed reply's buffer between its worker and the event loop (serve/stream_buffer.h).
#include "serve/stream_buffer.h"

#include <sys/socket.h>

#include <cerrno>

namespace minimax {

bool StreamBuffer::append(std::string_view bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (cut_) return false;
  if (bytes_.size() - sent_ + bytes.size() > max_backlog_) {
    cut_ = true;
    return false;
  }
  if (sent_ == bytes_.size()) {
    bytes_.clear();  // all written: start over instead of growing
    sent_ = 0;
    last_progress_ = Clock::now();  // a wait starts now, not at the last write
  }
  bytes_.append(bytes);
  return true;
}

StreamBuffer::Send StreamBuffer::send_to(int fd) {
  std::lock_guard<std::mutex> lock(mutex_);
  while (sent_ < bytes_.size()) {
    const ssize_t n =
        send(fd, bytes_.data() + sent_, bytes_.size() - sent_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent_ += static_cast<size_t>(n);
      last_progress_ = Clock::now();
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return Send::kBlocked;
    } else {
      return Send::kFailed;
    }
  }
  // Keep the buffer from growing with the length of the stream.
  bytes_.clear();
  sent_ = 0;
  last_progress_ = Clock::now();
  return Send::kDrained;
}

void StreamBuffer::cut() {
  std::lock_guard<std::mutex> lock(mutex_);
  cut_ = true;
}

bool StreamBuffer::is_cut() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cut_;
}

size_t StreamBuffer::backlog() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_.size() - sent_;
}

StreamBuffer::Clock::time_point StreamBuffer::last_progress() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_progress_;
}

std::string StreamBuffer::take_unsent() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string rest = bytes_.substr(sent_);
  bytes_.clear();
  sent_ = 0;
  return rest;
}

}  // namespace minimax
