// Logging: one line per message on stderr, below a threshold dropped (base/log.h).
#include "base/log.h"

#include <atomic>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace minimax {

namespace {
std::atomic<int> g_threshold{static_cast<int>(LogLevel::kInfo)};
std::atomic<int> g_format{static_cast<int>(LogFormat::kText)};

// The length of the valid UTF-8 sequence at the start of `s`, or 0 when it is not one (a lone
// continuation byte, a truncated, overlong or surrogate sequence, or past U+10FFFF).
size_t utf8_sequence(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  size_t n = c < 0x80                 ? 1
             : c >= 0xC2 && c <= 0xDF ? 2
             : c >= 0xE0 && c <= 0xEF ? 3
             : c >= 0xF0 && c <= 0xF4 ? 4
                                      : 0;
  if (n == 0 || n > s.size()) return 0;
  for (size_t i = 1; i < n; ++i)
    if ((b(i) & 0xC0) != 0x80) return 0;
  if (n == 3 && ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) > 0x9F))) return 0;
  if (n == 4 && ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) > 0x8F))) return 0;
  return n;
}

// Whether a text-format value must be quoted to stay one key=value token.
bool needs_quotes(std::string_view value) {
  if (value.empty()) return true;
  for (const char c : value)
    if (c == ' ' || c == '"' || c == '=' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return true;
  return false;
}

}  // namespace

LogLevel log_threshold() {
  return static_cast<LogLevel>(g_threshold.load(std::memory_order_relaxed));
}

void set_log_threshold(LogLevel level) {
  g_threshold.store(static_cast<int>(level), std::memory_order_relaxed);
}

LogFormat log_format() { return static_cast<LogFormat>(g_format.load(std::memory_order_relaxed)); }

void set_log_format(LogFormat format) {
  g_format.store(static_cast<int>(format), std::memory_order_relaxed);
}

std::string_view log_level_name(LogLevel level) {
  static constexpr std::string_view names[] = {"debug", "info", "warning", "error"};
  return names[static_cast<int>(level)];
}

std::optional<LogLevel> parse_log_level(std::string_view name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warning" || name == "warn") return LogLevel::kWarn;
  if (name == "error") return LogLevel::kError;
  return std::nullopt;
}

std::optional<LogFormat> parse_log_format(std::string_view name) {
  if (name == "text") return LogFormat::kText;
  if (name == "json") return LogFormat::kJson;
  return std::nullopt;
}

LogField log_field(std::string_view key, std::string_view value) {
  return LogField{key, std::string(value), false};
}

LogField log_field(std::string_view key, int64_t value) {
  return LogField{key, std::to_string(value), true};
}

LogField log_bool_field(std::string_view key, bool value) {
  return LogField{key, value ? "true" : "false", true};
}

LogField log_field_ms(std::string_view key, double milliseconds) {
  if (milliseconds < 0) return LogField{key, "-", false};
  return LogField{key, fmt::format("{:.1f}", milliseconds), true};
}

std::string log_timestamp(LogTime time) {
  const auto since_epoch = time.time_since_epoch();
  const auto seconds = std::chrono::floor<std::chrono::seconds>(since_epoch);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds).count();
  const std::time_t t = static_cast<std::time_t>(seconds.count());
  std::tm utc{};
  gmtime_r(&t, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
}

std::string json_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const unsigned char c = static_cast<unsigned char>(text.front());
    const size_t n = c < 0x80 ? 1 : utf8_sequence(text);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f || n == 0) {
      // Control characters, and bytes that are not UTF-8 (a path or a model name can hold any).
      out += fmt::format("\\u{:04x}", c);
    } else {
      out.append(text.substr(0, n));
      text.remove_prefix(n);
      continue;
    }
    text.remove_prefix(1);
  }
  return out;
}

std::string log_line(LogFormat format, LogTime time, LogLevel level, std::string_view message,
                     std::initializer_list<LogField> fields) {
  std::string line;
  if (format == LogFormat::kJson) {
    line = fmt::format(R"({{"ts":"{}","level":"{}","msg":"{}")", log_timestamp(time),
                       log_level_name(level), json_escape(message));
    for (const LogField& f : fields) {
      if (f.bare)
        line += fmt::format(R"(,"{}":{})", json_escape(f.key), f.value);
      else
        line += fmt::format(R"(,"{}":"{}")", json_escape(f.key), json_escape(f.value));
    }
    line += '}';
    return line;
  }
  // Text: the level padded to "warning"'s width, so that messages line up.
  line = fmt::format("{} {:<7} {}", log_timestamp(time), log_level_name(level), message);
  for (const LogField& f : fields) {
    if (f.bare || !needs_quotes(f.value))
      line += fmt::format(" {}={}", f.key, f.value);
    else
      line += fmt::format(" {}=\"{}\"", f.key, json_escape(f.value));
  }
  return line;
}

void log_write(LogLevel level, std::string_view message, std::initializer_list<LogField> fields) {
  if (level < log_threshold()) return;
  log_write_line(level,
                 log_line(log_format(), std::chrono::system_clock::now(), level, message, fields));
}

void log_write_line(LogLevel level, std::string_view line) {
  if (level < log_threshold()) return;
  std::string whole(line);
  whole += '\n';
  static std::mutex mutex;  // one fwrite per line already; the lock keeps lines whole past PIPE_BUF
  std::lock_guard<std::mutex> lock(mutex);
  std::fwrite(whole.data(), 1, whole.size(), stderr);
}

}  // namespace minimax
