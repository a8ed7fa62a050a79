// The throughput line (serve/throughput_log.h).
#include "serve/throughput_log.h"

#include <fmt/format.h>

namespace minimax {
namespace {

LogField rate(std::string_view key, int64_t tokens, double seconds) {
  return LogField{
      key, fmt::format("{:.1f}", seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0), true};
}

}  // namespace

std::optional<std::string> throughput_log_line(LogFormat format, LogTime time,
                                               const ServeMetrics::Snapshot& before,
                                               const ServeMetrics::Snapshot& now, double seconds) {
  const int64_t generated = now.generation_tokens - before.generation_tokens;
  const int64_t prompted = now.prompt_tokens - before.prompt_tokens;
  if (now.running == 0 && now.waiting == 0 && generated == 0 && prompted == 0) return std::nullopt;
  const double kv_use = now.kv_blocks_total > 0 ? 100.0 * static_cast<double>(now.kv_blocks_used) /
                                                      static_cast<double>(now.kv_blocks_total)
                                                : 0.0;
  return log_line(
      format, time, LogLevel::kInfo, "throughput",
      {log_field("running", now.running), log_field("waiting", now.waiting),
       rate("generation_tok_s", generated, seconds), rate("prompt_tok_s", prompted, seconds),
       log_field("kv_blocks_used", now.kv_blocks_used),
       log_field("kv_blocks_total", now.kv_blocks_total),
       LogField{"kv_use_pct", fmt::format("{:.1f}", kv_use), true}});
}

ThroughputLog::ThroughputLog(const ServeMetrics& metrics, std::chrono::milliseconds interval)
    : metrics_(metrics), interval_(interval), thread_([this] { run(); }) {}

ThroughputLog::~ThroughputLog() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ThroughputLog::run() {
  using Clock = std::chrono::steady_clock;
  ServeMetrics::Snapshot before = metrics_.snapshot();
  auto since = Clock::now();
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stop_; })) {
    const ServeMetrics::Snapshot now = metrics_.snapshot();
    const auto at = Clock::now();
    const double seconds = std::chrono::duration<double>(at - since).count();
    if (log_threshold() <= LogLevel::kInfo)
      if (auto line = throughput_log_line(log_format(), std::chrono::system_clock::now(), before,
                                          now, seconds))
        log_write_line(LogLevel::kInfo, *line);
    before = now;
    since = at;
  }
}

}  // namespace minimax
