// bench's figures describe the machine only when its threads got the cores: the CPU share (CPU
// time over wall time × threads) of each timed part says whether they did (issue 39: nothing
// warned when a run got a small share, and its speeds were read as the machine's).
#pragma once

#include <cstddef>
#include <string>

namespace minimax::cli {

struct CpuShares {
  double decode = 1, prefill = 1, bandwidth = 1;  // of the best run of each
};

// Below this share another process took a good part of the cores (or the threads waited), and
// the speeds and bandwidth understate the machine by about as much.
inline constexpr double kLowCpuShare = 0.7;

// The warning for a run with any share below kLowCpuShare, naming every share and `threads`; ""
// when all are above it.
std::string low_cpu_share_warning(const CpuShares& shares, size_t threads);

}  // namespace minimax::cli
