// Resident memory from /proc/self/status.
#include "base/process_memory.h"

#include <sys/resource.h>

#include <fstream>
#include <sstream>
#include <string>

namespace minimax {

ResidentMemory resident_memory() {
  ResidentMemory m;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    std::istringstream fields(line);
    std::string key;
    uint64_t kib = 0;
    fields >> key >> kib;  // "VmRSS:   123456 kB"
    if (key == "VmRSS:") m.current_bytes = kib << 10;
    if (key == "VmHWM:") m.peak_bytes = kib << 10;
  }
  if (m.peak_bytes == 0) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    m.peak_bytes = static_cast<uint64_t>(usage.ru_maxrss) << 10;  // KiB on Linux
  }
  return m;
}

bool reset_peak_resident_memory() {
  std::ofstream clear("/proc/self/clear_refs");
  if (!clear) return false;
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

}  // namespace minimax
