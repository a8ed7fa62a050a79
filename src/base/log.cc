// Logging: one line per message on stderr, level from MINIMAX_LOG.
#include "base/log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace minimax {

LogLevel log_threshold() {
  static const LogLevel level = [] {
    const char* env = std::getenv("MINIMAX_LOG");
    if (env == nullptr) return LogLevel::kInfo;
    if (std::strcmp(env, "debug") == 0) return LogLevel::kDebug;
    if (std::strcmp(env, "warn") == 0) return LogLevel::kWarn;
    if (std::strcmp(env, "error") == 0) return LogLevel::kError;
    return LogLevel::kInfo;
  }();
  return level;
}

void log_write(LogLevel level, std::string_view message) {
  static std::mutex mutex;
  static const char* names[] = {"debug", "info", "warn", "error"};
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "[%s] %.*s\n", names[static_cast<int>(level)],
               static_cast<int>(message.size()), message.data());
}

}  // namespace minimax
