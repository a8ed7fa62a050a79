// Compute peak of this machine for the instruction prefill multiplies bf16 weights with
// (kernels/cpu/dot_peak.h), measured on every thread of a pool with the operands in registers:
// what `minimax bench` compares prefill's achieved GFLOP/s with, as it compares decode with the
// measured memory bandwidth.
#pragma once

#include <string>

#include "base/thread_pool.h"
#include "kernels/cpu/dot_peak.h"

namespace minimax {

struct ComputePeak {
  DotInstruction instruction = DotInstruction::kScalarFma;
  double gflops = 0;     // all threads together, best pass (1 GFLOP = 1e9 operations)
  double seconds = 0;    // the best pass's wall time
  double cpu_share = 0;  // CPU time over wall time × threads during the passes (as Bandwidth)
  // Operations per CPU second over all passes: the peak of one thread that is not interrupted,
  // which still means something on a busy machine (compare with work per CPU second).
  double gflops_per_cpu_second = 0;
};

// Best of `repeats` passes in which every thread of `pool` runs the loop of `d` for about
// `pass_seconds` (calibrated on the calling thread first).
ComputePeak measure_compute_peak(ThreadPool& pool, DotInstruction d, int repeats = 5,
                                 double pass_seconds = 0.05);

}  // namespace minimax
