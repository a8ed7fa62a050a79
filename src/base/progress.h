// Progress report for long jobs: a redrawn bar with bytes done, rate and ETA on a terminal, plain
// lines (at most one every few seconds) when stderr is not a terminal. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace minimax {

class Progress {
 public:
  Progress(std::string label, uint64_t total_bytes);
  ~Progress();
  void add(uint64_t bytes);
  void finish();

 private:
  void draw(bool final);

  std::string label_;
  uint64_t total_, done_ = 0;
  bool tty_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
  std::mutex mutex_;
};

// "1.50 GiB", "12.0 MiB", "512 B".
std::string format_bytes(double bytes);

}  // namespace minimax
