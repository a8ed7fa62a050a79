// The operator's throughput line of `minimax serve`: every 10 s while requests are running or
// waiting (and once more for the interval in which the last one finished), the requests
// running and waiting, generation and prompt tokens per second over the interval, and the KV
// blocks in use. Quiet while idle, so an idle server's log holds nothing but requests.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "base/log.h"
#include "runtime/serve_metrics.h"

namespace minimax {

// The line for the interval from `before` to `now` (`seconds` long), or nullopt when nothing ran
// in it and nothing runs or waits now.
std::optional<std::string> throughput_log_line(LogFormat format, LogTime time,
                                               const ServeMetrics::Snapshot& before,
                                               const ServeMetrics::Snapshot& now, double seconds);

// Writes the line every `interval` from a thread of its own, until destroyed.
class ThroughputLog {
 public:
  explicit ThroughputLog(const ServeMetrics& metrics,
                         std::chrono::milliseconds interval = std::chrono::seconds(10));
  ~ThroughputLog();
  ThroughputLog(const ThroughputLog&) = delete;
  ThroughputLog& operator=(const ThroughputLog&) = delete;

 private:
  void run();

  const ServeMetrics& metrics_;
  const std::chrono::milliseconds interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace minimax
