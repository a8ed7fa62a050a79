// Compute peak measurement (runtime/compute_peak.h).
#include "runtime/compute_peak.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "base/clock.h"
#include "base/error.h"
#include "runtime/bandwidth.h"

namespace minimax {

ComputePeak measure_compute_peak(ThreadPool& pool, DotInstruction d, int repeats,
                                 double pass_seconds) {
  if (repeats <= 0) fail("compute peak: repeats must be > 0, got {}", repeats);
  // Calibrate: double the iterations until one thread's loop takes a fifth of a pass.
  int64_t iterations = 1000;
  double sink = 0;
  for (;;) {
    const auto start = std::chrono::steady_clock::now();
    sink += run_dot_loop(d, iterations);
    const double s = seconds_since(start);
    if (s >= pass_seconds / 5 || iterations > (int64_t{1} << 40)) {
      iterations = std::max<int64_t>(1, static_cast<int64_t>(iterations * pass_seconds / s));
      break;
    }
    iterations *= 2;
  }
  ComputePeak out;
  out.instruction = d;
  out.seconds = 1e30;
  std::vector<double> sums(pool.size());
  double wall = 0;
  const double cpu_start = process_cpu_seconds();
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(pool.size(), [&](size_t b, size_t e, size_t) {
      for (size_t t = b; t < e; ++t) sums[t] += run_dot_loop(d, iterations);
    });
    const double s = seconds_since(start);
    out.seconds = std::min(out.seconds, s);
    wall += s;
  }
  const double cpu_seconds = process_cpu_seconds() - cpu_start;
  out.cpu_share = cpu_seconds / (wall * pool.size());
  const double flops = static_cast<double>(iterations) * kDotChains * dot_instruction_flops(d) *
                       static_cast<double>(pool.size());
  out.gflops = flops / out.seconds / 1e9;
  out.gflops_per_cpu_second = flops * repeats / cpu_seconds / 1e9;
  // Keep the sums observable so the loops cannot be optimised away.
  volatile double keep = sink;
  for (double s : sums) keep = keep + s;
  (void)keep;
  return out;
}

}  // namespace minimax
