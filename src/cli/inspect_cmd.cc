// `minimax inspect DIR [--json] [parallel and KV flags]`: describe a checkpoint and print its
// memory plan on this host (cli/memory_plan.h); exit status 1 when tensors are missing,
// unexpected or mis-shaped. `inspect --hf-config CONFIG --layout L` plans a released config in a
// layout without its weights; `--layout-table` prints the layout guide's table (docs/layouts.md).
#include <cstdio>

#include "base/error.h"
#include "base/thread_pool.h"
#include "checkpoint/hf_config_checkpoint.h"
#include "checkpoint/inspect.h"
#include "checkpoint/quantize.h"
#include "cli/commands.h"
#include "cli/kv_cache_flag.h"
#include "cli/kv_memory.h"
#include "cli/memory_plan.h"
#include "cli/model_path_check.h"
#include "cli/parallel_flags.h"
#include "runtime/bandwidth.h"
#include "runtime/memory_footprint.h"

namespace minimax::cli {
namespace {

struct InspectArgs {
  std::string dir, hf_config, layout;
  bool json = false, all = false, layout_table = false;
  ParallelRequest parallel;
  std::string kv_cache_dtype = "auto";
  int64_t context = 0, max_num_seqs = 16, table_context = 131072;
  double utilization = 0.9, bandwidth_gbs = 0, host_memory_gib = 0;
  int ranks_per_host = 0;
};

// The read bandwidth for the decode bound: --bandwidth-gbs, or a measurement of about a second.
std::pair<double, std::string> read_bandwidth(double given) {
  if (given > 0) return {given, "--bandwidth-gbs"};
  ThreadPool pool(0);
  const Bandwidth measured = measure_bandwidth(pool, size_t{256} << 20, 3);
  return {measured.read_gbps, fmt::format("measured now, {} threads", pool.size())};
}

MemoryPlan memory_plan_of(const InspectArgs& args, const ModelConfig& config,
                          const QuantConfig& quant) {
  MemoryPlanInputs in;
  in.config = config;
  in.quant = quant;
  in.parallel = args.parallel;
  in.kv_dtype = kv_cache_dtype(args.kv_cache_dtype);
  in.utilization = args.utilization;
  in.ranks_on_host = args.ranks_per_host > 0 ? args.ranks_per_host : ranks_on_this_host();
  in.context = args.context;
  in.max_num_seqs = args.max_num_seqs;
  in.host_bytes = usable_memory_bytes();
  in.available_bytes = available_memory_bytes();
  if (args.host_memory_gib > 0)  // planning for another machine
    in.host_bytes = in.available_bytes = static_cast<int64_t>(args.host_memory_gib * (1 << 30));
  std::tie(in.read_gbps, in.read_gbps_source) = read_bandwidth(args.bandwidth_gbs);
  return plan_memory(in);
}

void run_inspect(const InspectArgs& args) {
  if (args.dir.empty() == args.hf_config.empty())
    fail("inspect: give a checkpoint directory or --hf-config CONFIG.json (one of them)");
  if (!args.hf_config.empty()) {
    const nlohmann::json json = read_json_file(args.hf_config);
    if (args.layout_table) {
      std::fputs(layout_fit_table(json, args.hf_config, args.table_context).c_str(), stdout);
      return;
    }
    if (args.layout.empty()) fail("--hf-config: needs --layout (or --layout-table)");
    const QuantScheme scheme = parse_quant_scheme(args.layout);
    const ModelConfig config = parse_model_config(json, args.hf_config);
    const QuantConfig quant = quant_config_for_layout(json, scheme, args.hf_config);
    std::fputs(memory_plan_of(args, config, quant).text.c_str(), stdout);
    return;
  }
  check_model_path(args.dir, "inspect");
  const InspectReport report = inspect_checkpoint(args.dir);
  const std::string plan =
      memory_plan_of(args, load_model_config(args.dir), load_quant_config(args.dir)).text;
  if (args.json) {
    nlohmann::ordered_json j = report.summary;
    j["missing"] = report.missing;
    j["unexpected"] = report.unexpected;
    j["mismatched"] = report.mismatched;
    j["skipped"] = report.skipped;
    j["ok"] = report.ok();
    j["memory_plan"] = plan;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::fputs(format_inspect_report(report, args.all ? 0 : 20).c_str(), stdout);
    std::fputs(plan.c_str(), stdout);
  }
  if (!report.ok()) throw CLI::RuntimeError(1);
}

}  // namespace

void register_inspect(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "inspect", "Describe a checkpoint directory, check its tensors and plan its memory");
  auto args = std::make_shared<InspectArgs>();
  cmd->add_option("dir", args->dir, "Checkpoint directory");
  cmd->add_flag("--json", args->json, "Print the report as JSON");
  cmd->add_flag("--all", args->all, "List every missing/unexpected tensor, not the first 20");
  auto* hf = cmd->add_option("--hf-config", args->hf_config,
                             "Plan a released config.json (e.g. models/configs/"
                             "minimax-m3.config.json) without its weights")
                 ->group("Plan without weights");
  cmd->add_option("--layout", args->layout,
                  "With --hf-config: the weight layout (bf16, fp8-block, fp8-channel, mxfp8, "
                  "mxfp4, mxfp4-fp8attn, nvfp4)")
      ->needs(hf)
      ->group("Plan without weights");
  cmd->add_flag("--layout-table", args->layout_table,
                "With --hf-config: the markdown table of every layout against 128-512 GiB hosts "
                "(docs/layouts.md)")
      ->needs(hf)
      ->group("Plan without weights");
  cmd->add_option("--table-context", args->table_context,
                  "With --layout-table: tokens per request counted in the table (default 131072)")
      ->check(CLI::PositiveNumber)
      ->group("Plan without weights");
  add_parallel_flags(cmd, args->parallel);
  add_kv_cache_dtype_flag(cmd, args->kv_cache_dtype);
  cmd->add_option("--max-model-len", args->context,
                  "Context per request the plan counts (default: the model's)")
      ->group("Memory plan");
  cmd->add_option("--max-num-seqs", args->max_num_seqs,
                  "Requests at once the plan counts (default 16)")
      ->group("Memory plan");
  cmd->add_option("--memory-utilization", args->utilization,
                  "Share of what the weights leave for the KV pool, as serve's (default 0.9)")
      ->check(CLI::Range(0.01, 1.0))
      ->group("Memory plan");
  cmd->add_option("--ranks-per-host", args->ranks_per_host,
                  "Ranks sharing this host's memory (default: mpirun's local size, else 1)")
      ->check(CLI::PositiveNumber)
      ->group("Memory plan");
  cmd->add_option("--host-memory-gib", args->host_memory_gib,
                  "Plan for a host with this much memory (GiB, its MemTotal) instead of this one")
      ->check(CLI::PositiveNumber)
      ->group("Memory plan");
  cmd->add_option("--bandwidth-gbs", args->bandwidth_gbs,
                  "Read bandwidth in GB/s for the decode bound (default: measured in ~1 s)")
      ->check(CLI::PositiveNumber)
      ->group("Memory plan");
  cmd->callback([args] { run_inspect(*args); });
}

}  // namespace minimax::cli
