// Memory bandwidth of this machine, measured with a given thread pool: what the decode speed is
// compared against (decode streams every active weight byte once per token). Buffers much larger
// than the caches are touched first by the thread that later streams them.
#pragma once

#include <cstddef>

#include "base/thread_pool.h"

namespace minimax {

struct Bandwidth {
  double copy_gbps = 0;  // memcpy: bytes copied per second (each byte read once, written once)
  double read_gbps = 0;  // read-only streaming sum: bytes read per second
  size_t buffer_bytes = 0;
  int repeats = 0;
  // CPU time over wall time × threads during the timed passes: well below 1 means other
  // processes took the cores and the figures understate the machine.
  double cpu_share = 0;
};

// Best of `repeats` passes over a `buffer_bytes` buffer (two for the copy), split over `pool`'s
// threads by contiguous slices. GB = 1e9 bytes.
Bandwidth measure_bandwidth(ThreadPool& pool, size_t buffer_bytes = size_t{512} << 20,
                            int repeats = 5);

// CPU seconds this process has used (all threads, user and system): over a timed run's wall
// time × threads, the share of the machine the run got.
double process_cpu_seconds();

}  // namespace minimax
