// Leveled logging to stderr, one line per message, each with a timestamp and its level. Two
// formats: text for people ("2025-06-01T12:34:56.789Z info    serve: ...", fields as key=value)
// and JSON for log collectors (one object per line: "ts", "level", "msg", then the fields as
// keys). The command line sets the threshold and the format (--log-level, --log-format, or
// MINIMAX_LOG); the library reads no environment.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace minimax {

enum class LogLevel { kDebug, kInfo, kWarn, kError };
enum class LogFormat { kText, kJson };

// Messages below the threshold are dropped: kInfo unless set.
LogLevel log_threshold();
void set_log_threshold(LogLevel level);
LogFormat log_format();
void set_log_format(LogFormat format);

// "debug", "info", "warning", "error"; parse_log_level also takes "warn" (MINIMAX_LOG's old
// spelling). nullopt for anything else.
std::string_view log_level_name(LogLevel level);
std::optional<LogLevel> parse_log_level(std::string_view name);
std::optional<LogFormat> parse_log_format(std::string_view name);

// One key of a structured line: a string (quoted in JSON; in text quoted only when it holds a
// space, a quote, '=' or a control character) or a bare value (a number, true, false) written
// as is in both. "-" stands for unknown.
struct LogField {
  std::string_view key;
  std::string value;
  bool bare = false;
};
LogField log_field(std::string_view key, std::string_view value);
LogField log_field(std::string_view key, int64_t value);
LogField log_bool_field(std::string_view key, bool value);
// Milliseconds with one decimal, "-" when negative (not measured).
LogField log_field_ms(std::string_view key, double milliseconds);

using LogTime = std::chrono::system_clock::time_point;
// "2025-06-01T12:34:56.789Z": ISO-8601, UTC, milliseconds.
std::string log_timestamp(LogTime time);
// `text` as a JSON string body (without the quotes): ", \, control characters and invalid
// UTF-8 bytes escaped (the latter as \u00XX of the byte, so a line always parses).
std::string json_escape(std::string_view text);
// The whole line, without the newline, as log_write prints it.
std::string log_line(LogFormat format, LogTime time, LogLevel level, std::string_view message,
                     std::initializer_list<LogField> fields = {});

void log_write(LogLevel level, std::string_view message,
               std::initializer_list<LogField> fields = {});
// Writes a line made by log_line (a newline is added), unless `level` is below the threshold.
void log_write_line(LogLevel level, std::string_view line);

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
template <typename... Args>
void log_error(fmt::format_string<Args...> f, Args&&... args) {
  log_write(LogLevel::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace minimax
