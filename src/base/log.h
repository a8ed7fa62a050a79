// Minimal leveled logging to stderr. MINIMAX_LOG=debug|info|warn|error sets the threshold.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace minimax {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

// Messages below the threshold are dropped: kInfo unless set (the command line sets it from
// MINIMAX_LOG; the library reads no environment).
LogLevel log_threshold();
void set_log_threshold(LogLevel level);
void log_write(LogLevel level, std::string_view message);

template <typename... Args>
void log_info(fmt::format_string<Args...> f, Args&&... args) {
  if (log_threshold() <= LogLevel::kInfo)
    log_write(LogLevel::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void log_warn(fmt::format_string<Args...> f, Args&&... args) {
  if (log_threshold() <= LogLevel::kWarn)
    log_write(LogLevel::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void log_debug(fmt::format_string<Args...> f, Args&&... args) {
  if (log_threshold() <= LogLevel::kDebug)
    log_write(LogLevel::kDebug, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace minimax
