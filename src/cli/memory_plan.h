// The memory plan `inspect` and `serve --dry-run` print: a model in a layout over the ranks of a
// parallel layout, against this host. Weights per rank and KV bytes per token come from
// runtime/memory_footprint.h, the KV pool from the rule `serve --kv-cache-memory auto` uses
// (cli/kv_memory.h), so the plan says what `serve` would do; the decode bound from a read
// bandwidth, measured or given.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/model_config.h"
#include "checkpoint/quant_config.h"
#include "kernels/ops.h"
#include "parallel/parallel_mode.h"

namespace minimax::cli {

struct MemoryPlanInputs {
  ModelConfig config;
  QuantConfig quant;
  ParallelRequest parallel;
  KvDtype kv_dtype = KvDtype::kF32;
  std::string kv_cache_memory = "auto";  // serve's --kv-cache-memory: auto or a size in bytes
  int64_t kv_cache_bytes = 0;            // the size when not auto (the whole model's KV)
  double utilization = 0.9;
  int ranks_on_host = 1;
  int64_t context = 0;  // --max-model-len, or 0 for the model's own
  int64_t max_num_seqs = 16;
  int64_t draft_bytes = 0;  // speculation's memory beside the model (draft_memory_bytes)
  int64_t host_bytes = 0;        // usable_memory_bytes(): MemTotal or the cgroup limit
  int64_t available_bytes = 0;   // available_memory_bytes(): what is free now
  double read_gbps = 0;          // 0: no decode bound
  std::string read_gbps_source;  // "measured in 1 s", "--bandwidth-gbs"
};

struct MemoryPlan {
  std::string text;  // the plan, one line a fact, every number named
  bool fits = true;  // the weights and a pool of one full-context request fit this host
};

MemoryPlan plan_memory(const MemoryPlanInputs& in);

// A markdown table for docs/layouts.md: for each layout, the weights, the KV bytes per token at
// each KV type, and for each memory size in `hosts_gib` how many requests of `context` tokens
// (bf16 KV) fit beside the weights under serve's auto rule, or "—" when the weights do not fit.
std::string layout_fit_table(const nlohmann::json& hf_config, const std::string& source,
                             int64_t context);

}  // namespace minimax::cli
