// Wall-clock intervals for the timings that commands and the runtime report.
#pragma once

#include <chrono>

namespace minimax {

// Seconds elapsed on the monotonic clock since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace minimax
