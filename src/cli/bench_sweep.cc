#include "cli/bench_sweep.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/atomic_output.h"
#include "base/error.h"
#include "base/progress.h"
#include "base/svg_chart.h"
#include "cli/kv_cache_flag.h"
#include "kernels/cpu/linear.h"
#include "runtime/decode_bytes.h"
#include "runtime/sweep_report.h"
#include "runtime/throughput_sweep.h"

namespace minimax::cli {
namespace {

// The 1-minute load average: other processes on the machine skew every speed measured.
double load_average() {
  double load[1] = {0};
  return getloadavg(load, 1) == 1 ? load[0] : std::nan("");
}

nlohmann::ordered_json cells_json(const std::vector<SweepCell>& cells) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const SweepCell& c : cells)
    out.push_back({{"context", c.context},
                   {"streams", c.streams},
                   {"ttft_mean_s", c.ttft_mean_seconds},
                   {"ttft_max_s", c.ttft_max_seconds},
                   {"decode_tok_s_per_stream", c.decode_tok_s_per_stream},
                   {"aggregate_tok_s", c.aggregate_tok_s},
                   {"ratio_to_1_stream", std::isnan(c.ratio_to_one_stream)
                                             ? nlohmann::ordered_json()
                                             : nlohmann::ordered_json(c.ratio_to_one_stream)},
                   {"window_tokens", c.window_tokens},
                   {"tokens_per_stream", c.tokens_per_stream},
                   {"cpu_share", std::isnan(c.cpu_share) ? nlohmann::ordered_json()
                                                         : nlohmann::ordered_json(c.cpu_share)},
                   {"union_bound_tok_s", std::isnan(c.union_bound_tok_s)
                                             ? nlohmann::ordered_json()
                                             : nlohmann::ordered_json(c.union_bound_tok_s)},
                   {"ratio_to_union_bound", std::isnan(c.ratio_to_union_bound)
                                                ? nlohmann::ordered_json()
                                                : nlohmann::ordered_json(c.ratio_to_union_bound)}});
  return out;
}

}  // namespace

void add_sweep_flags(CLI::App* cmd, SweepArgs& args) {
  auto* sweep = cmd->add_flag(
      "--sweep", args.sweep,
      "Instead of the single-stream figures: decode tok/s per stream and aggregate, and time to "
      "first token, over context length x concurrent streams, through the serving engine");
  cmd->add_option("--sweep-contexts", args.contexts, "Prompt tokens per stream, e.g. 512,2048")
      ->delimiter(',')
      ->needs(sweep)
      ->capture_default_str();
  cmd->add_option("--sweep-streams", args.streams, "Concurrent streams, e.g. 1,2,4,8")
      ->delimiter(',')
      ->needs(sweep)
      ->capture_default_str();
  cmd->add_option("--sweep-tokens", args.tokens,
                  "Decode steps timed while every stream decodes (each request generates this "
                  "many plus the steps the other prompts' prefills take)")
      ->needs(sweep)
      ->capture_default_str();
  cmd->add_option("--sweep-warmup", args.warmup,
                  "largest: one untimed run of the largest cell first (warms every shape on the "
                  "CPU backend); each: an untimed run before every cell")
      ->check(CLI::IsMember({"largest", "each"}))
      ->needs(sweep)
      ->capture_default_str();
  cmd->add_option("--max-num-batched-tokens", args.max_batched_tokens,
                  "Tokens per engine step, as in serve")
      ->needs(sweep)
      ->capture_default_str();
  auto* compare =
      cmd->add_option("--compare", args.compare,
                      "Two CSV files of --sweep --csv runs: print them side by side (and draw "
                      "them on one --chart); needs no --model")
          ->expected(2)
          ->excludes(sweep);
  cmd->add_option("--label", args.labels,
                  "Names of the --compare runs in the chart (default: the file names)")
      ->expected(1, 2)
      ->needs(compare);
  cmd->add_option("--csv", args.csv, "Write the sweep's cells to this CSV file")->needs(sweep);
  cmd->add_option("--chart", args.chart, "Write the sweep (or the comparison) as an SVG chart");
}

void run_sweep(Model& model, const SweepArgs& args, const SweepSetting& setting) {
  if (args.max_batched_tokens <= 0)
    fail("--max-num-batched-tokens: must be > 0, got {}", args.max_batched_tokens);
  const BpeTokenizer tokenizer = BpeTokenizer::from_file(
      (std::filesystem::path(setting.model_dir) / "tokenizer.json").string());
  SweepOptions options;
  options.contexts = args.contexts;
  options.streams = args.streams;
  options.tokens = args.tokens;
  options.max_batched_tokens = args.max_batched_tokens;
  options.kv_cache_dtype = kv_cache_dtype(setting.kv_cache_dtype);
  options.warmup = args.warmup == "each" ? SweepWarmup::kEach : SweepWarmup::kLargest;
  options.threads = setting.threads;
  std::optional<Progress> progress;
  if (!setting.quiet) {
    // sweep_total_tokens checks nothing; an invalid grid fails at the start of the run below.
    progress.emplace("bench --sweep",
                     static_cast<uint64_t>(std::max<int64_t>(0, sweep_total_tokens(options))),
                     "tokens");
    progress->show_after(std::chrono::seconds(1));
    options.on_tokens = [&progress](int64_t n) { progress->add(static_cast<uint64_t>(n)); };
  }
  const double load_before = load_average();
  std::vector<SweepCell> cells = run_throughput_sweep(model, tokenizer, options);
  if (progress) progress->finish();
  const double load_after = load_average();
  const ModelConfig& c = model.config();
  const DecodeBytes per_token = decode_bytes_per_token(model.weights(), c);
  if (setting.read_gbps > 0)
    set_union_bound(cells, per_token, c.num_experts, c.experts_per_tok, setting.read_gbps);
  const char* activations = activation_precision_name(model.options().cpu.activations);
  const std::string model_text = fmt::format(
      "{} ({} {}, {} layers, {} experts top-{})", setting.model_dir, c.architecture,
      quant_scheme_name(model.quant().scheme), c.num_layers, c.num_experts, c.experts_per_tok);
  const std::string conditions = fmt::format(
      "{} threads, KV cache {}, activations {}, {} timed decode steps per cell, warm-up {}, load "
      "average {:.1f} before and {:.1f} after; union bound: {:.1f} GB/s read bandwidth, {:.1f} MB "
      "of weights per token, of which {:.1f} MB routed experts",
      setting.threads, kv_dtype_name(options.kv_cache_dtype), activations, args.tokens, args.warmup,
      load_before, load_after, setting.read_gbps, static_cast<double>(per_token.total()) / 1e6,
      static_cast<double>(per_token.routed_experts) / 1e6);
  if (!args.csv.empty())
    write_file_atomic(args.csv,
                      sweep_csv(cells, "minimax bench --sweep: " + model_text + "\n" + conditions));
  if (!args.chart.empty())
    write_file_atomic(args.chart, render_svg_chart(sweep_chart({{setting.model_dir, cells}},
                                                               model_text + "\n" + conditions)));
  if (setting.json) {
    nlohmann::ordered_json out = {{"model", setting.model_dir},
                                  {"architecture", c.architecture},
                                  {"weights", quant_scheme_name(model.quant().scheme)},
                                  {"threads", setting.threads},
                                  {"kv_cache_dtype", kv_dtype_name(options.kv_cache_dtype)},
                                  {"activations", activations},
                                  {"sweep_tokens", args.tokens},
                                  {"warmup", args.warmup},
                                  {"load_average_before", load_before},
                                  {"load_average_after", load_after},
                                  {"read_gbps", setting.read_gbps},
                                  {"weight_bytes_per_token", per_token.total()},
                                  {"routed_expert_bytes_per_token", per_token.routed_experts},
                                  {"cells", cells_json(cells)}};
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::printf("%s\n%s\n\n%s", model_text.c_str(), conditions.c_str(),
              sweep_table_text(cells).c_str());
}

void run_sweep_compare(const SweepArgs& args) {
  std::vector<SweepRun> runs;
  for (size_t i = 0; i < args.compare.size(); ++i) {
    const std::string& path = args.compare[i];
    const std::string label =
        i < args.labels.size() ? args.labels[i] : std::filesystem::path(path).stem().string();
    runs.push_back({label, parse_sweep_csv(read_file(path), path)});
  }
  std::fputs(sweep_compare_text(runs[0], runs[1]).c_str(), stdout);
  if (!args.chart.empty())
    write_file_atomic(args.chart,
                      render_svg_chart(sweep_chart(
                          runs, fmt::format("{} against {}", args.compare[1], args.compare[0]))));
}

}  // namespace minimax::cli
