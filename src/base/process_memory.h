// This process's resident memory, as the kernel counts it (/proc/self/status): what `bench`
// reports against the bound "mapped weights + KV pool + 1 GiB". Mapped checkpoint pages count once
// touched, like any other resident page.
#pragma once

#include <cstdint>

namespace minimax {

struct ResidentMemory {
  uint64_t current_bytes = 0;  // VmRSS
  uint64_t peak_bytes = 0;     // VmHWM: the high-water mark since start or the last reset
};

// Reads /proc/self/status; falls back to getrusage's ru_maxrss (peak only) where /proc is absent.
ResidentMemory resident_memory();

// Resets the high-water mark to the current RSS (Linux: "5" into /proc/self/clear_refs), so that
// a peak can be measured over one phase of a run. False when the kernel does not allow it.
bool reset_peak_resident_memory();

}  // namespace minimax
