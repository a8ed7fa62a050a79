// `serve --kv-cache-memory auto` (the default): the KV pool takes a share of the memory this host
// leaves after the weights, as vLLM's --gpu-memory-utilization does for a GPU, so that a real
// checkpoint gets its whole context instead of a fixed 1 GiB pool (issue 39: 4.2K tokens of
// MiniMax-M2.5's 196,608). Never more than the running requests could fill.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace minimax::cli {

struct KvMemoryInputs {
  int64_t host_bytes = 0;       // usable_memory_bytes(): MemTotal, or the cgroup's lower limit
  int64_t weights_bytes = 0;    // this process's weights (ModelWeights::mapped_bytes)
  int64_t reserve_bytes = 0;    // the step workspace, the process, the page cache's working set
  double utilization = 0.9;     // --memory-utilization
  int ranks_on_host = 1;        // processes of one job sharing this host
  int64_t bytes_per_token = 0;  // every layer's K, V (and M3 index keys) at the cache type
  int64_t tokens_wanted = 0;    // max_num_seqs × the context: more could never be used
};

struct KvMemoryPlan {
  int64_t bytes = 0;    // the pool: u × (host − weights − reserve) / ranks, at most the cap
  bool capped = false;  // that share was above what the requests could fill
  std::string summary;  // one line for the log, every number named
};

// The pool for `in`; Error naming `flag` when nothing is left for it (the weights and the reserve
// take the host's memory), with what each took.
KvMemoryPlan plan_kv_memory(const KvMemoryInputs& in, std::string_view flag = "--kv-cache-memory");

// MemTotal of /proc/meminfo, lowered to the cgroup's memory limit (v2 memory.max, v1
// memory.limit_in_bytes) when one is set.
int64_t usable_memory_bytes();
// MemAvailable of /proc/meminfo (what can be had without swapping), lowered to what the cgroup's
// limit leaves (memory.max − memory.current) when one is set; 0 when unknown.
int64_t available_memory_bytes();
// available_memory_bytes() shared by this host's ranks (ranks_on_this_host), each of which loads
// its own share of the weights; 0 when unknown. What the load's prefault decision compares the
// weights with (model/model_weights.h should_prefault).
int64_t available_memory_per_rank();
// A cgroup memory limit's text ("max", "8589934592") as bytes; 0 when it sets none.
int64_t bytes_of_cgroup_limit(std::string_view text);
// The `MemTotal: N kB` line of a /proc/meminfo text as bytes; 0 when absent.
int64_t mem_total_of_meminfo(std::string_view meminfo);
// The `FIELD: N kB` line of a /proc/meminfo text as bytes; 0 when absent.
int64_t meminfo_bytes(std::string_view meminfo, std::string_view field);

// What serve keeps aside from the KV pool for the step workspace and the process itself.
inline constexpr int64_t kKvReserveBytes = int64_t{1} << 30;

// Processes of this MPI job on this host (Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's
// MPI_LOCALNRANKS); 1 outside mpirun.
int ranks_on_this_host();

}  // namespace minimax::cli
