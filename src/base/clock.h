// Wall-clock intervals for the timings that commands and the runtime report, and the CPU time of
// the calling thread for budgets of work.
#pragma once

#include <time.h>

#include <chrono>

namespace minimax {

// The CPU time the calling thread has run (CLOCK_THREAD_CPUTIME_ID), as a chrono clock. A budget
// of work measured with it does not run out while the thread waits for a core: on a busy machine
// (two MPI ranks spinning on two cores, a build beside the server) a wall-clock budget of 20 ms
// ended masks that had done a millisecond of work. Only differences on one thread mean anything.
struct ThreadCpuClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<ThreadCpuClock>;
  static constexpr bool is_steady = true;
  static time_point now() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return time_point(duration(rep{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec));
  }
};

// Seconds elapsed on the monotonic clock since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace minimax
