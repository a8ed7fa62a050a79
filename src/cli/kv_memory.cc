#include "cli/kv_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "base/error.h"
#include "cli/cgroup_files.h"

namespace minimax::cli {
namespace {

std::string gib(int64_t bytes) { return fmt::format("{:.2f} GiB", double(bytes) / (1 << 30)); }

std::string meminfo_text() {
  std::ifstream in("/proc/meminfo");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

KvMemoryPlan plan_kv_memory(const KvMemoryInputs& in, std::string_view flag) {
  if (!(in.utilization > 0 && in.utilization <= 1))
    fail("--memory-utilization: {} is not in (0, 1]", in.utilization);
  const int64_t left = in.host_bytes - in.weights_bytes - in.reserve_bytes;
  if (left <= 0)
    fail(
        "{} auto: nothing is left for the KV cache: this host has {} ({}), the weights take {} and "
        "the workspace reserve {}; give {} a size, or use a smaller layout",
        flag, gib(in.host_bytes), "MemTotal or the cgroup limit", gib(in.weights_bytes),
        gib(in.reserve_bytes), flag);
  KvMemoryPlan plan;
  const int64_t share =
      static_cast<int64_t>(in.utilization * double(left)) / std::max(in.ranks_on_host, 1);
  const int64_t cap =
      in.bytes_per_token > 0 && in.tokens_wanted > 0 &&
              in.tokens_wanted < std::numeric_limits<int64_t>::max() / in.bytes_per_token
          ? in.tokens_wanted * in.bytes_per_token
          : std::numeric_limits<int64_t>::max();
  plan.capped = cap < share;
  plan.bytes = std::min(share, cap);
  plan.summary = fmt::format(
      "KV cache {} ({} tokens at {} bytes each): {} × (memory {} − weights {} − reserve {}){}{}",
      gib(plan.bytes), in.bytes_per_token > 0 ? plan.bytes / in.bytes_per_token : 0,
      in.bytes_per_token, in.utilization, gib(in.host_bytes), gib(in.weights_bytes),
      gib(in.reserve_bytes),
      in.ranks_on_host > 1 ? fmt::format(" / {} ranks", in.ranks_on_host) : "",
      plan.capped ? fmt::format(", capped at what {} tokens fill", in.tokens_wanted) : "");
  return plan;
}

int64_t bytes_of_cgroup_limit(std::string_view text) {
  if (text.empty() || text == "max") return 0;
  std::istringstream parse{std::string(text)};
  long long bytes = 0;
  if (!(parse >> bytes) || bytes <= 0) return 0;
  // cgroup v1 writes "no limit" as a page-rounded LONG_MAX.
  if (bytes >= (1LL << 62)) return 0;
  return bytes;
}

int64_t meminfo_bytes(std::string_view meminfo, std::string_view field) {
  const std::string prefix = std::string(field) + ":";
  std::istringstream in{std::string(meminfo)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::istringstream fields(line.substr(prefix.size()));
    long long kb = 0;
    return fields >> kb ? static_cast<int64_t>(kb) * 1024 : 0;
  }
  return 0;
}

int64_t mem_total_of_meminfo(std::string_view meminfo) {
  return meminfo_bytes(meminfo, "MemTotal");
}

int64_t available_memory_bytes() {
  int64_t bytes = meminfo_bytes(meminfo_text(), "MemAvailable");
  const int64_t limit = bytes_of_cgroup_limit(
      cgroup_value("memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"));
  if (limit > 0) {
    const int64_t used = bytes_of_cgroup_limit(
        cgroup_value("memory.current", "/sys/fs/cgroup/memory/memory.usage_in_bytes"));
    const int64_t left = std::max<int64_t>(limit - used, 0);
    if (bytes == 0 || left < bytes) bytes = left;
  }
  return bytes;
}

int64_t available_memory_per_rank() { return available_memory_bytes() / ranks_on_this_host(); }

int64_t usable_memory_bytes() {
  int64_t bytes = mem_total_of_meminfo(meminfo_text());
  const int64_t limit = bytes_of_cgroup_limit(
      cgroup_value("memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"));
  if (limit > 0 && (bytes == 0 || limit < bytes)) bytes = limit;
  return bytes;
}

int ranks_on_this_host() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"})
    if (const char* value = std::getenv(name); value != nullptr && std::atoi(value) > 0)
      return std::atoi(value);
  return 1;
}

}  // namespace minimax::cli
