// Copy and read bandwidth measurement (runtime/bandwidth.h).
#include "runtime/bandwidth.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "base/clock.h"
#include "base/error.h"
#include "base/huge_pages.h"

namespace minimax {

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

namespace {

// Four 16-byte lanes of 64-bit integers: plain SSE2 (the x86-64 baseline) already issues two
// loads per cycle, far above what memory delivers, so no ISA dispatch is needed here.
using Lanes = uint64_t __attribute__((vector_size(16)));

uint64_t stream_sum(const uint8_t* data, size_t bytes) {
  Lanes a{}, b{}, c{}, d{};
  const size_t step = 4 * sizeof(Lanes);
  size_t i = 0;
  for (; i + step <= bytes; i += step) {
    Lanes x, y, z, w;
    std::memcpy(&x, data + i, sizeof(Lanes));
    std::memcpy(&y, data + i + 16, sizeof(Lanes));
    std::memcpy(&z, data + i + 32, sizeof(Lanes));
    std::memcpy(&w, data + i + 48, sizeof(Lanes));
    a += x;
    b += y;
    c += z;
    d += w;
  }
  const Lanes s = a + b + c + d;
  uint64_t total = s[0] + s[1];
  for (; i < bytes; ++i) total += data[i];
  return total;
}

struct Slices {
  size_t bytes, threads;
  // Cache-line aligned split of [0, bytes) into `threads` parts.
  size_t begin(size_t t) const { return (bytes * t / threads) & ~size_t{63}; }
  size_t end(size_t t) const { return t + 1 == threads ? bytes : begin(t + 1); }
};

// Fastest of `repeats` passes; adds the wall time of all of them to `total_wall`.
template <typename Fn>
double best_seconds(ThreadPool& pool, int repeats, const Fn& pass, double& total_wall) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(pool.size(), [&](size_t b, size_t e, size_t) {
      for (size_t t = b; t < e; ++t) pass(t);
    });
    const double s = seconds_since(start);
    if (s < best) best = s;
    total_wall += s;
  }
  return best;
}

}  // namespace

Bandwidth measure_bandwidth(ThreadPool& pool, size_t buffer_bytes, int repeats) {
  if (buffer_bytes < (size_t{1} << 20))
    fail("bandwidth: buffer of {} bytes is too small", buffer_bytes);
  if (repeats <= 0) fail("bandwidth: repeats must be > 0, got {}", repeats);
  const Slices slices{buffer_bytes, pool.size()};
  // In huge pages where the kernel offers them, as the weights (--weight-pages huge): in 4 KiB
  // pages a read loop streamed ~12% less than in 2 MiB pages (Intel Xeon with AMX).
  HugePageBuffer src_pages(buffer_bytes), dst_pages(buffer_bytes);
  uint8_t* const src = src_pages.data();
  uint8_t* const dst = dst_pages.data();
  // First touch by the streaming thread places pages near it (NUMA) and faults them in.
  pool.parallel_for(pool.size(), [&](size_t b, size_t e, size_t) {
    for (size_t t = b; t < e; ++t) {
      const size_t from = slices.begin(t), to = slices.end(t);
      for (size_t i = from; i < to; ++i) src[i] = static_cast<uint8_t>(i * 131);
      std::memset(dst + from, 0, to - from);
    }
  });
  Bandwidth out;
  out.buffer_bytes = buffer_bytes;
  out.repeats = repeats;
  double wall = 0;
  const double cpu_start = process_cpu_seconds();
  const double copy = best_seconds(
      pool, repeats,
      [&](size_t t) {
        std::memcpy(dst + slices.begin(t), src + slices.begin(t), slices.end(t) - slices.begin(t));
      },
      wall);
  out.copy_gbps = buffer_bytes / copy / 1e9;
  std::vector<uint64_t> sums(pool.size());
  const double read = best_seconds(
      pool, repeats,
      [&](size_t t) {
        sums[t] += stream_sum(src + slices.begin(t), slices.end(t) - slices.begin(t));
      },
      wall);
  out.cpu_share = (process_cpu_seconds() - cpu_start) / (wall * pool.size());
  out.read_gbps = buffer_bytes / read / 1e9;
  // Keep the sums observable so the reads cannot be optimised away.
  volatile uint64_t sink = 0;
  for (uint64_t s : sums) sink = sink + s;
  (void)sink;
  return out;
}

}  // namespace minimax
