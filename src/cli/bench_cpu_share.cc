// The low CPU share warning (cli/bench_cpu_share.h).
#include "cli/bench_cpu_share.h"

#include <fmt/format.h>

namespace minimax::cli {

std::string low_cpu_share_warning(const CpuShares& shares, size_t threads) {
  if (shares.decode >= kLowCpuShare && shares.prefill >= kLowCpuShare &&
      shares.bandwidth >= kLowCpuShare)
    return "";
  return fmt::format(
      "the run got a low CPU share (CPU time over wall time × {} thread(s): decode {:.2f}, "
      "prefill {:.2f}, bandwidth test {:.2f}; below {:.1f} is low): other processes took the "
      "cores, or the threads waited, so the speeds and bandwidth understate this machine; rerun "
      "on an idle machine or with fewer --threads",
      threads, shares.decode, shares.prefill, shares.bandwidth, kLowCpuShare);
}

}  // namespace minimax::cli
