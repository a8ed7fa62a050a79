// Reading this process's cgroup limits (CPU quota, memory limit) under cgroup v2 or v1: what a
// container may use, which is less than what the host has. Shared by --threads and the KV memory
// plan of `serve`.
#pragma once

#include <string>

namespace minimax::cli {

// The first line of a file, or "" when it cannot be read.
std::string first_line_of(const std::string& path);

// The contents of the first of this process's cgroup's `v2_name` files that exists: its own group
// (/sys/fs/cgroup + the path in /proc/self/cgroup), then the root a container sees; under cgroup
// v1, `v1_path`. "" when none can be read.
std::string cgroup_value(const std::string& v2_name, const std::string& v1_path);

}  // namespace minimax::cli
