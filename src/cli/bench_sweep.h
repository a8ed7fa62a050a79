// `minimax bench --sweep` and `minimax bench --compare`: the flags and the two modes
// (runtime/throughput_sweep.h measures, runtime/sweep_report.h formats).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"
#include "runtime/prefill_chunk.h"

namespace minimax::cli {

struct SweepArgs {
  bool sweep = false;
  // Small defaults: about a minute on the benchmark shape with 2 threads.
  std::vector<int64_t> contexts = {128, 512};
  std::vector<int64_t> streams = {1, 2, 4, 8};
  int64_t tokens = 32;
  int64_t max_batched_tokens = kDefaultPrefillChunk;
  std::string warmup = "largest";
  std::string csv, chart;
  std::vector<std::string> compare, labels;
};

// Adds --sweep, --sweep-contexts, --sweep-streams, --sweep-tokens, --sweep-warmup,
// --max-num-batched-tokens, --csv, --chart, --compare and --label to `cmd`.
void add_sweep_flags(CLI::App* cmd, SweepArgs& args);

struct SweepSetting {
  std::string model_dir, kv_cache_dtype;
  size_t threads = 0;
  bool json = false, quiet = false;
  // Read bandwidth of the machine (runtime/bandwidth.h, every thread of the pool), for each
  // cell's union bound; 0 leaves the bound out.
  double read_gbps = 0;
};

// Runs the sweep on `model` (rank 0) and prints the table (or JSON); writes --csv and --chart.
void run_sweep(Model& model, const SweepArgs& args, const SweepSetting& setting);
// Reads the two --compare CSV files, prints them side by side and writes --chart.
void run_sweep_compare(const SweepArgs& args);

}  // namespace minimax::cli
