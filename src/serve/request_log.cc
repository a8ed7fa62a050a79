// The request log line (serve/request_log.h).
#include "serve/request_log.h"

namespace minimax {
namespace {

double milliseconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

std::string_view or_dash(std::string_view s) { return s.empty() ? std::string_view("-") : s; }

LogField count_field(std::string_view key, int64_t value) {
  return value < 0 ? log_field(key, "-") : log_field(key, value);
}

LogLevel level_of(const RequestRecord& record) {
  return record.quiet ? LogLevel::kDebug : LogLevel::kInfo;
}

}  // namespace

std::string request_log_line(LogFormat format, LogTime time, const RequestRecord& r) {
  static const RequestStats kNone;
  const RequestStats& s = r.stats != nullptr ? *r.stats : kNone;
  const double ttft = s.first_token ? milliseconds(*s.first_token - r.start) : -1;
  return log_line(
      format, time, level_of(r), "request",
      {log_field("client", or_dash(r.client)), log_field("method", or_dash(r.method)),
       log_field("path", or_dash(r.path)), log_field("status", int64_t{r.status}),
       log_field("model", or_dash(s.model)), count_field("prompt_tokens", s.prompt_tokens),
       count_field("completion_tokens", s.completion_tokens), log_field_ms("ttft_ms", ttft),
       log_field_ms("duration_ms", milliseconds(r.end - r.start)),
       log_field("finish_reason", or_dash(s.finish_reason)),
       log_bool_field("stream", r.stats != nullptr && s.stream)});
}

void log_request(const RequestRecord& record) {
  if (level_of(record) < log_threshold()) return;
  log_write_line(level_of(record),
                 request_log_line(log_format(), std::chrono::system_clock::now(), record));
}

}  // namespace minimax
