// Logging: one line per message on stderr, below a threshold dropped.
#include "base/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>

namespace minimax {

namespace {
std::atomic<int> g_threshold{static_cast<int>(LogLevel::kInfo)};
}  // namespace

LogLevel log_threshold() {
  return static_cast<LogLevel>(g_threshold.load(std::memory_order_relaxed));
}

void set_log_threshold(LogLevel level) {
  g_threshold.store(static_cast<int>(level), std::memory_order_relaxed);
}

void log_write(LogLevel level, std::string_view message) {
  static std::mutex mutex;
  static const char* names[] = {"debug", "info", "warn", "error"};
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "[%s] %.*s\n", names[static_cast<int>(level)],
               static_cast<int>(message.size()), message.data());
}

}  // namespace minimax
