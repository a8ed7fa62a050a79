// --threads, shared by every command that runs worker threads. llama.cpp's `-1` means "all", and
// read into a size_t it became 2^64-1 (issue 39: `serve --threads -1` started 32,281 threads and
// left the machine unable to fork); a count far above the CPUs this process may run on only adds
// context switches. Both are decided here, against the CPUs the process may actually use (a
// container's affinity mask or CPU quota, not the host's hardware threads).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <string_view>

namespace minimax::cli {

// The CPUs this process may use: those of its affinity mask (sched_getaffinity), lowered to its
// cgroup's CPU quota (rounded up) when one is set. At least 1.
size_t usable_cpus();

// A cgroup v2 `cpu.max` text ("max 100000", "250000 100000") as whole CPUs, rounded up; 0 when it
// sets no limit or cannot be read.
size_t cpus_of_cgroup_quota(std::string_view cpu_max);

// The thread count for a --threads value: 0 or less means all `cpus`; more than twice `cpus` is an
// Error naming `flag` and the CPU count.
size_t resolve_threads(long long requested, size_t cpus, std::string_view flag = "--threads");

// Adds --threads N into `threads`: usable_cpus() unless given, resolve_threads() when given.
CLI::Option* add_threads_flag(CLI::App* cmd, size_t& threads, const std::string& help);

}  // namespace minimax::cli
