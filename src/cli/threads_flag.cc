#include "cli/threads_flag.h"

#include <sched.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "cli/cgroup_files.h"

namespace minimax::cli {
namespace {

// The CPU quota of this process's cgroup in whole CPUs; 0 when none is set (cgroup v2 cpu.max;
// under v1 cpu.cfs_quota_us and cpu.cfs_period_us).
size_t cgroup_quota_cpus() {
  if (size_t cpus = cpus_of_cgroup_quota(cgroup_value("cpu.max", ""))) return cpus;
  const std::string quota = first_line_of("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
  const std::string period = first_line_of("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  if (quota.empty() || period.empty()) return 0;
  return cpus_of_cgroup_quota(quota + " " + period);  // v1's -1 (no limit) reads as 0 below
}

}  // namespace

size_t cpus_of_cgroup_quota(std::string_view cpu_max) {
  std::istringstream in{std::string(cpu_max)};
  long long quota = 0, period = 0;
  if (!(in >> quota >> period) || quota <= 0 || period <= 0) return 0;  // "max ..." fails here
  return static_cast<size_t>((quota + period - 1) / period);
}

size_t usable_cpus() {
  size_t cpus = 0;
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) cpus = static_cast<size_t>(CPU_COUNT(&mask));
  if (cpus == 0) cpus = std::max(1u, std::thread::hardware_concurrency());
  if (const size_t quota = cgroup_quota_cpus(); quota > 0) cpus = std::min(cpus, quota);
  return std::max<size_t>(cpus, 1);
}

size_t resolve_threads(long long requested, size_t cpus, std::string_view flag) {
  if (requested <= 0) return cpus;
  if (static_cast<unsigned long long>(requested) > 2 * cpus)
    fail(
        "{}: {} threads is more than twice the {} CPUs this process may use (its affinity mask "
        "and CPU quota); give at most {}, or 0 for one per CPU",
        flag, requested, cpus, 2 * cpus);
  return static_cast<size_t>(requested);
}

CLI::Option* add_threads_flag(CLI::App* cmd, size_t& threads, const std::string& help) {
  threads = usable_cpus();
  return cmd->add_option_function<long long>(
      "--threads",
      [&threads](const long long& requested) {
        threads = resolve_threads(requested, usable_cpus());
      },
      help + fmt::format(" (default and 0 or less: all {} CPUs this process may use; at most "
                         "twice that)",
                         threads));
}

}  // namespace minimax::cli
