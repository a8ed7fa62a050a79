// `minimax bench --model DIR [--prompt-tokens N] [--gen-tokens N] [--threads T] [--json]`: this
// machine's copy and read bandwidth and compute peak (runtime/compute_peak.h) measured in the same
// run with the same threads, then prefill (and its GFLOP/s against that peak)
// and decode speed, the active weight bytes per decoded token, the bandwidth decode achieves
// (bytes/token × tok/s) and its ratio to the measured bandwidth. Greedy decode; no timing is
// taken before a warm-up pass has faulted the mapped weights in. With --depth N, also the decode
// speed after N tokens of context (bench_depth.h), in a cache of --kv-cache-dtype. Peak resident
// memory is reported against mapped weights + KV pool + 1 GiB (bench_memory.h). With --sweep,
// the serving engine's throughput over context length x concurrent streams instead, and with
// --compare two such runs side by side (bench_sweep.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "base/progress.h"
#include "cli/activations_flag.h"
#include "cli/backend_flag.h"
#include "cli/bench_cpu_share.h"
#include "cli/bench_depth.h"
#include "cli/bench_memory.h"
#include "cli/bench_replay.h"
#include "cli/bench_sweep.h"
#include "cli/commands.h"
#include "cli/kv_cache_flag.h"
#include "cli/kv_memory.h"
#include "cli/model_flag.h"
#include "cli/model_path_check.h"
#include "cli/parallel_flags.h"
#include "cli/speculative_flag.h"
#include "cli/threads_flag.h"
#include "cli/weight_pages_flag.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/linear.h"
#include "model/model.h"
#include "runtime/bandwidth.h"
#include "runtime/compute_peak.h"
#include "runtime/decode_bytes.h"
#include "runtime/model_session.h"
#include "runtime/prefill_flops.h"
#include "runtime/sampler.h"
#include "runtime/text_model.h"

namespace minimax::cli {
namespace {

struct BenchArgs {
  std::string model, moe_path = "fast", backend = "cpu";
  bool cpu_moe = false;
  int64_t prompt_tokens = 128, gen_tokens = 32;
  int64_t prefill_chunk = kDefaultPrefillChunk;  // tokens per model call in a prefill
  size_t threads = 0;
  bool huge_page_weights = true;  // --weight-pages
  int repeat = 3;
  size_t bandwidth_mib = 1024;
  bool json = false;
  ParallelRequest parallel;
  std::string kv_cache_dtype = "auto", activations;
  bool batch_invariant = false;
  std::string speculative_config, replay;  // --replay: cli/bench_replay.h
  std::vector<int64_t> depths;  // --depth: decode speed after this many tokens of context  //
                                // --depth: decode speed after this many tokens of context
  std::string depth_fill = "tile";
  bool quiet = false;
  SweepArgs sweep;
};

// Which kernels run each op: the backend's own or the reference fallback.
nlohmann::ordered_json kernel_sources(const KernelOps& ops) {
  const auto source = [&ops](std::string_view op) {
    return std::find(ops.from_reference.begin(), ops.from_reference.end(), op) !=
                   ops.from_reference.end()
               ? "reference"
               : ops.name;
  };
  nlohmann::ordered_json out;
  for (const char* op : {"linear", "moe", "attention", "rms_norm", "rope", "route", "embedding"})
    out[op == std::string_view("route") ? "router" : op] = source(op);
  return out;
}

struct Timings {
  double prefill_seconds = 1e30, decode_seconds = 1e30, cold_prefill_seconds = 0;
  double prefill_cpu_share = 0;  // as decode_cpu_share, for the fastest prefill
  double prefill_cpu_seconds = 0;
  // CPU time over wall time × threads while decoding: well below 1 means other processes took
  // the cores (or the threads waited), and the speeds understate the machine.
  double decode_cpu_share = 0;
  // Under several ranks: rank 0's seconds inside collectives per decoded token (best run).
  double decode_comm_seconds_per_token = 0;
  // Under several ranks: bytes sent per token (Communicator::sent_bytes) by rank 0 and, at 2
  // ranks, by rank 1 (what rank 0 received), while decoding and while prefilling (best runs).
  std::vector<double> decode_sent_bytes_per_token, prefill_sent_bytes_per_token;
};

// Rank 0's communication counters at one moment; sent_per_token turns the difference from `start`
// into bytes per token by rank (see Timings).
struct CommBytes {
  uint64_t sent = 0, received = 0;
};
CommBytes comm_bytes(const Communicator* comm) {
  return comm == nullptr ? CommBytes{} : CommBytes{comm->sent_bytes(), comm->received_bytes()};
}
std::vector<double> sent_per_token(const Communicator* comm, CommBytes start, int64_t tokens) {
  if (comm == nullptr) return {};
  const CommBytes now = comm_bytes(comm);
  std::vector<double> by_rank{double(now.sent - start.sent) / tokens};
  if (comm->size() == 2) by_rank.push_back(double(now.received - start.received) / tokens);
  return by_rank;
}

Timings time_model(Model& model, const BenchArgs& args, size_t threads, const Communicator* comm,
                   Progress* progress) {
  const auto count = [progress](int64_t tokens) {
    if (progress != nullptr) progress->add(static_cast<uint64_t>(tokens));
  };
  // Prompt ids spread over the vocabulary, fixed so that runs compare.
  std::vector<int32_t> prompt(args.prompt_tokens);
  SampleRng rng(1234);
  for (int32_t& id : prompt) id = static_cast<int32_t>(rng.next_unit() * model.config().vocab_size);
  ModelSession session(model, args.prompt_tokens + args.gen_tokens + 1, args.prefill_chunk,
                       kv_cache_dtype(args.kv_cache_dtype));
  Timings t;
  auto start = std::chrono::steady_clock::now();
  session.prefill(prompt);  // warm-up: faults the mapped weights in
  t.cold_prefill_seconds = seconds_since(start);
  count(args.prompt_tokens);
  for (int r = 0; r < args.repeat; ++r) {
    session.reset();
    start = std::chrono::steady_clock::now();
    const double prefill_cpu_start = process_cpu_seconds();
    const CommBytes prefill_bytes = comm_bytes(comm);
    std::vector<float> logits = session.prefill(prompt);
    const double prefill_wall = seconds_since(start);
    if (prefill_wall < t.prefill_seconds) {
      t.prefill_seconds = prefill_wall;
      t.prefill_sent_bytes_per_token = sent_per_token(comm, prefill_bytes, args.prompt_tokens);
      t.prefill_cpu_seconds = process_cpu_seconds() - prefill_cpu_start;
      t.prefill_cpu_share = t.prefill_cpu_seconds / (prefill_wall * threads);
    }
    count(args.prompt_tokens);
    start = std::chrono::steady_clock::now();
    const double cpu_start = process_cpu_seconds();
    const double comm_start = comm != nullptr ? comm->busy_seconds() : 0;
    const CommBytes decode_bytes = comm_bytes(comm);
    for (int64_t i = 0; i < args.gen_tokens; ++i) logits = session.decode(argmax(logits));
    const double wall = seconds_since(start);
    count(args.gen_tokens);
    if (wall < t.decode_seconds) {
      t.decode_seconds = wall;
      t.decode_cpu_share = (process_cpu_seconds() - cpu_start) / (wall * threads);
      if (comm != nullptr)
        t.decode_comm_seconds_per_token = (comm->busy_seconds() - comm_start) / args.gen_tokens;
      t.decode_sent_bytes_per_token = sent_per_token(comm, decode_bytes, args.gen_tokens);
    }
  }
  return t;
}

// The results as an aligned two-column table.
void print_table(const nlohmann::ordered_json& r, const BenchArgs& args, const ModelConfig& c,
                 const DecodeBytes& bytes) {
  const auto row = [](std::string_view label, const std::string& value) {
    std::printf("%-16s %s\n", std::string(label).c_str(), value.c_str());
  };
  const auto mb = [](uint64_t b) { return b / 1e6; };
  std::string sources;
  for (const auto& [op, source] : r["kernel_sources"].items())
    sources += fmt::format(" {}={}", op, source.get<std::string>());
  const double decode_s = r["decode_seconds"], prefill_s = r["prefill_seconds"];
  const double copy = r["copy_gbps"], read = r["read_gbps"], achieved = r["achieved_gbps"];
  const double cpu_share = r["decode_cpu_share"];
  const size_t threads = r["threads"];
  row("model",
      fmt::format("{} ({}, {}, {} layers, {} experts top-{})", args.model, c.architecture,
                  r["weights"].get<std::string>(), c.num_layers, c.num_experts, c.experts_per_tok));
  row("kernels",
      fmt::format("{} ({}, MoE path {}):{}", r["kernels"].get<std::string>(),
                  r["cpu_isa"].get<std::string>(), r["moe_path"].get<std::string>(), sources));
  row("threads", fmt::format("{}", threads));
  row("copy bandwidth", fmt::format("{:.2f} GB/s (memcpy of {} MiB)", copy, args.bandwidth_mib));
  row("read bandwidth", fmt::format("{:.2f} GB/s (streaming sum)", read));
  const auto& peak = r["compute_peak"];
  row("compute peak",
      fmt::format("{:.1f} GFLOP/s ({} in registers, {} thread(s), CPU share {:.2f})",
                  peak["gflops"].get<double>(), peak["instruction"].get<std::string>(), threads,
                  peak["cpu_share"].get<double>()));
  row("prefill", fmt::format("{} tokens in {:.3f} s: {:.1f} tok/s (first, cold: {:.3f} s)",
                             args.prompt_tokens, prefill_s, r["prefill_tok_s"].get<double>(),
                             r["cold_prefill_seconds"].get<double>()));
  row("prefill compute",
      fmt::format("{:.1f} GFLOP/s ({:.3f} GFLOP: {:.1f} M weights/token, lm_head {:.1f} M per "
                  "{}-token chunk; activations {}), {:.3f} of the compute peak; CPU share {:.2f}",
                  r["prefill_gflops"].get<double>(), r["prefill_gflop"].get<double>(),
                  r["prefill_weights_per_token"].get<double>() / 1e6,
                  r["prefill_lm_head_weights"].get<double>() / 1e6,
                  r["prefill_chunk"].get<int64_t>(), r["activations"].get<std::string>(),
                  r["prefill_ratio_to_peak"].get<double>(), r["prefill_cpu_share"].get<double>()));
  row("in CPU time",
      fmt::format("prefill {:.1f} GFLOP per CPU second, the peak loop {:.1f}: {:.3f}",
                  r["prefill_gflops_per_cpu_second"].get<double>(),
                  peak["gflops_per_cpu_second"].get<double>(),
                  r["prefill_ratio_to_peak_cpu_time"].get<double>()));
  row("decode",
      fmt::format("{} tokens in {:.3f} s: {:.2f} tok/s, {:.1f} ms/token", args.gen_tokens, decode_s,
                  r["decode_tok_s"].get<double>(), 1e3 * decode_s / args.gen_tokens));
  row("bytes/token",
      fmt::format("{:.1f} MB: attention {:.1f}, router {:.2f}, experts {:.1f}, shared {:.1f}, "
                  "dense {:.1f}, norms {:.3f}, embedding row {:.3f}, lm_head {:.1f}",
                  mb(bytes.total()), mb(bytes.attention), mb(bytes.router),
                  mb(bytes.routed_experts), mb(bytes.shared_expert), mb(bytes.dense_ffn),
                  mb(bytes.norms), mb(bytes.embedding_row), mb(bytes.lm_head)));
  row("achieved", fmt::format("{:.2f} GB/s", achieved));
  row("ratio", fmt::format("{:.3f} of copy bandwidth, {:.3f} of read bandwidth", achieved / copy,
                           achieved / read));
  const double bandwidth_share = r["bandwidth_cpu_share"];
  row("CPU share", fmt::format("{:.2f} of {} thread(s) during decode, {:.2f} during the bandwidth "
                               "test",
                               cpu_share, threads, bandwidth_share));
  for (const auto& d : r["depth"])
    row(fmt::format("decode @ {}", d["depth"].get<int64_t>()),
        fmt::format("{:.2f} tok/s, {:.1f} ms/token, {:.2f}x the first depth's time (KV {}, fill {} "
                    "in {:.1f} s, CPU share {:.2f})",
                    d["decode_tok_s"].get<double>(), d["ms_per_token"].get<double>(),
                    d["ratio_to_first"].get<double>(), r["kv_cache_dtype"].get<std::string>(),
                    d["fill"].get<std::string>(), d["fill_seconds"].get<double>(),
                    d["decode_cpu_share"].get<double>()));
  const auto& m = r["memory"];
  const auto gib = [](const nlohmann::ordered_json& v) {
    return v.get<uint64_t>() / double(1 << 30);
  };
  row("peak RSS",
      fmt::format(
          "{:.2f} GiB ({} the bound {:.2f} GiB = mapped weights {:.2f} + KV pool {:.2f} + "
          "1 + repacked {:.2f}; load peak {:.2f}{})",
          gib(m["peak_rss_bytes"]), m["within_bound"].get<bool>() ? "within" : "OVER",
          gib(m["bound_bytes"]), gib(m["mapped_weight_bytes"]), gib(m["kv_pool_bytes"]),
          gib(m["repacked_weight_bytes"]), gib(m["load_peak_rss_bytes"]),
          m["peak_includes_bandwidth_test"].get<bool>() ? "; includes the bandwidth test" : ""));
  row("weight pages",
      m["huge_page_weight_bytes"].get<uint64_t>() > 0
          ? fmt::format("{:.2f} GiB moved into huge pages at load, {:.2f} GiB of the process in "
                        "huge pages now (--weight-pages huge)",
                        gib(m["huge_page_weight_bytes"]), gib(m["anon_huge_page_bytes"]))
          : std::string("the checkpoint mapping's (--weight-pages mapped, or no transparent huge "
                        "pages, or weights not read in at load)"));
}

// Tokens the single-stream figures process, for the progress bar.
uint64_t bench_tokens(const BenchArgs& args) {
  int64_t total = args.prompt_tokens * (1 + args.repeat) + args.gen_tokens * args.repeat;
  for (int64_t n : args.depths)
    total +=
        depth_fill_tokens(n, parse_depth_fill(args.depth_fill)) + args.gen_tokens * args.repeat;
  return static_cast<uint64_t>(total);
}

void check_args(const BenchArgs& args) {
  check_model_path(args.model);  // all but --compare run a model
  if (args.prompt_tokens <= 0) fail("--prompt-tokens: must be > 0, got {}", args.prompt_tokens);
  if (args.gen_tokens <= 0) fail("--gen-tokens: must be > 0, got {}", args.gen_tokens);
  if (args.repeat <= 0) fail("--repeat: must be > 0, got {}", args.repeat);
  if (args.prefill_chunk <= 0) fail("--prefill-chunk: must be > 0, got {}", args.prefill_chunk);
}

ModelOptions bench_model_options(const BenchArgs& args, ThreadPool& pool) {
  ModelOptions options;
  const bool speculating = !args.speculative_config.empty();
  options.cpu =
      cpu_kernel_config(args.activations, args.batch_invariant || speculating, cpu_environment(),
                        args.batch_invariant ? "--batch-invariant" : "--speculative-config");
  options.backend = resolve_backend(args.backend, args.cpu_moe);
  options.cpu_moe = args.cpu_moe;
  options.moe_path = parse_moe_path(args.moe_path, "--moe-path");
  options.pool = &pool;
  options.parallel = args.parallel;
  options.show_load_progress = !args.quiet;
  options.memory_available_bytes = available_memory_per_rank();
  options.huge_page_weights = args.huge_page_weights;
  return options;
}

// What one bench run measured, for the report.
struct Measured {
  Bandwidth bw;
  ComputePeak peak;
  DecodeBytes bytes;
  Timings t;
  KvDtype kv_dtype = KvDtype::kF32;
  nlohmann::ordered_json depth;  // decode at each --depth
};

// Decode after each --depth tokens of context.
nlohmann::ordered_json time_depths(Model& model, const BenchArgs& args, KvDtype kv_dtype,
                                   size_t threads, BenchMemory& memory, Progress* bar) {
  nlohmann::ordered_json depth = nlohmann::ordered_json::array();
  double first_ms = 0;
  for (int64_t n : args.depths) {
    const DepthTiming d = time_decode_at_depth(model, n, args.gen_tokens, args.repeat, kv_dtype,
                                               parse_depth_fill(args.depth_fill), threads, bar);
    memory.saw_kv_pool(single_sequence_kv_bytes(model.config(), n + args.gen_tokens, kv_dtype));
    const double ms = 1e3 * d.decode_seconds / args.gen_tokens;
    if (first_ms == 0) first_ms = ms;
    depth.push_back({{"depth", n},
                     {"fill", args.depth_fill},
                     {"fill_seconds", d.fill_seconds},
                     {"decode_seconds", d.decode_seconds},
                     {"decode_tok_s", args.gen_tokens / d.decode_seconds},
                     {"ms_per_token", ms},
                     {"ratio_to_first", ms / first_ms},
                     {"decode_cpu_share", d.decode_cpu_share}});
  }
  return depth;
}

nlohmann::ordered_json bytes_json(const DecodeBytes& bytes) {
  return {{"attention", bytes.attention},
          {"router", bytes.router},
          {"routed_experts", bytes.routed_experts},
          {"shared_expert", bytes.shared_expert},
          {"dense_ffn", bytes.dense_ffn},
          {"norms", bytes.norms},
          {"embedding_row", bytes.embedding_row},
          {"lm_head", bytes.lm_head},
          {"total", bytes.total()}};
}

// Prefill against the compute peak, in wall time and in CPU time.
void add_prefill(nlohmann::ordered_json& out, const Model& model, const BenchArgs& args,
                 const Measured& m) {
  const PrefillFlops flops = prefill_flops(model.weights(), model.config());
  const double gflop = flops.total(args.prompt_tokens, args.prefill_chunk) / 1e9;
  out["prompt_tokens"] = args.prompt_tokens;
  out["prefill_chunk"] = args.prefill_chunk;
  out["cold_prefill_seconds"] = m.t.cold_prefill_seconds;
  out["prefill_seconds"] = m.t.prefill_seconds;
  out["prefill_tok_s"] = args.prompt_tokens / m.t.prefill_seconds;
  out["prefill_cpu_share"] = m.t.prefill_cpu_share;
  out["prefill_weights_per_token"] = flops.per_token;
  out["prefill_lm_head_weights"] = flops.lm_head;
  out["prefill_gflop"] = gflop;
  out["prefill_gflops"] = gflop / m.t.prefill_seconds;
  out["prefill_ratio_to_peak"] = gflop / m.t.prefill_seconds / m.peak.gflops;
  // The same in CPU time (prefill's operations per CPU second over the peak loop's): what the
  // ratio would be on an idle machine, as long as the other load only takes time slices.
  out["prefill_gflops_per_cpu_second"] = gflop / m.t.prefill_cpu_seconds;
  out["prefill_ratio_to_peak_cpu_time"] =
      gflop / m.t.prefill_cpu_seconds / m.peak.gflops_per_cpu_second;
}

// Decode against the memory bandwidth.
void add_decode(nlohmann::ordered_json& out, const BenchArgs& args, const Measured& m) {
  const double decode_tps = args.gen_tokens / m.t.decode_seconds;
  const double achieved_gbps = m.bytes.total() * decode_tps / 1e9;
  out["gen_tokens"] = args.gen_tokens;
  out["decode_seconds"] = m.t.decode_seconds;
  out["decode_tok_s"] = decode_tps;
  out["decode_cpu_share"] = m.t.decode_cpu_share;
  out["repeat"] = args.repeat;
  out["kv_cache_dtype"] = kv_dtype_name(m.kv_dtype);
  out["depth"] = m.depth;
  out["bytes_per_token"] = bytes_json(m.bytes);
  out["achieved_gbps"] = achieved_gbps;
  out["ratio_to_copy"] = achieved_gbps / m.bw.copy_gbps;
  out["ratio_to_read"] = achieved_gbps / m.bw.read_gbps;
}

nlohmann::ordered_json bench_report(const Model& model, const BenchArgs& args,
                                    const ModelOptions& options, size_t threads, const Measured& m,
                                    BenchMemory& memory) {
  const ModelConfig& c = model.config();
  nlohmann::ordered_json out = {
      {"model", args.model},
      {"architecture", c.architecture},
      {"weights", quant_scheme_name(model.quant().scheme)},
      {"moe_path", moe_path_name(options.moe_path)},
      {"kernels", model.ops().name},
      {"cpu_isa", cpu_isa_name(options.cpu.isa)},
      {"kernel_sources", kernel_sources(model.ops())},
      {"threads", threads},
      {"copy_gbps", m.bw.copy_gbps},
      {"read_gbps", m.bw.read_gbps},
      {"bandwidth_buffer_mib", args.bandwidth_mib},
      {"bandwidth_cpu_share", m.bw.cpu_share},
      {"compute_peak",
       {{"instruction", dot_instruction_name(batch_dot_instruction(options.cpu))},
        {"gflops", m.peak.gflops},
        {"cpu_share", m.peak.cpu_share},
        {"gflops_per_cpu_second", m.peak.gflops_per_cpu_second}}},
      {"activations", activation_precision_name(options.cpu.activations)},
      {"batch_invariant", options.cpu.batch_invariant},
  };
  add_prefill(out, model, args, m);
  add_decode(out, args, m);
  out["parallel"] = {{"mode", parallel_mode_name(model.plan().mode)},
                     {"ranks", model.plan().ranks},
                     {"mapped_bytes_by_rank", model.mapped_bytes_by_rank()},
                     {"decode_comm_seconds_per_token", m.t.decode_comm_seconds_per_token},
                     {"decode_sent_bytes_per_token_by_rank", m.t.decode_sent_bytes_per_token},
                     {"prefill_sent_bytes_per_token_by_rank", m.t.prefill_sent_bytes_per_token}};
  out["memory"] = memory.report();
  return out;
}

void run_bench(const BenchArgs& args) {
  if (!args.sweep.chart.empty() && !args.sweep.sweep && args.sweep.compare.empty())
    fail("--chart: draws a --sweep or a --compare; give one of them");
  if (!args.sweep.compare.empty()) return run_sweep_compare(args.sweep);
  check_args(args);
  const std::optional<SpeculativeConfig> spec = speculative_config_of(args.speculative_config);
  if (spec && args.replay.empty())
    fail(
        "--speculative-config: bench measures speculation on recorded text; give --replay "
        "FILE.jsonl (scripts/make_replays.py writes them)");
  if (!spec && !args.replay.empty())
    fail("--replay: give --speculative-config JSON too (what to measure against the plain run)");
  ThreadPool pool(args.threads);
  const ModelOptions options = bench_model_options(args, pool);
  if (spec) {
    const std::vector<ReplayCase> cases = read_replay_file(args.replay);  // before the load
    auto text_model = TextModel::load(args.model, options, ranks());
    if (follow_rank0(text_model->model())) return;
    const nlohmann::ordered_json report = run_replay(
        *text_model, cases, {*spec, args.repeat, kv_cache_dtype(args.kv_cache_dtype), args.quiet});
    if (args.json)
      std::printf("%s\n", report.dump(2).c_str());
    else
      print_replay(report);
    return;
  }
  auto model = Model::load(args.model, options, ranks());
  if (follow_rank0(*model)) return;  // the timings and the report are rank 0's
  if (args.sweep.sweep)
    return run_sweep(*model, args.sweep,
                     {args.model, args.kv_cache_dtype, pool.size(), args.json, args.quiet,
                      measure_bandwidth(pool, args.bandwidth_mib << 20).read_gbps});
  BenchMemory memory(*model);
  Measured m;
  // Measured after loading, so that under mpirun the other ranks are waiting quietly by then.
  m.bw = measure_bandwidth(pool, args.bandwidth_mib << 20);
  m.peak = measure_compute_peak(pool, batch_dot_instruction(options.cpu));
  memory.exclude_bandwidth_test();
  m.bytes = decode_bytes_per_token(model->weights(), model->config());
  std::optional<Progress> progress;
  if (!args.quiet) {
    progress.emplace("bench", bench_tokens(args), "tokens");
    progress->show_after(std::chrono::seconds(1));
  }
  Progress* bar = progress ? &*progress : nullptr;
  m.kv_dtype = kv_cache_dtype(args.kv_cache_dtype);
  m.t = time_model(*model, args, pool.size(), ranks(), bar);
  memory.saw_kv_pool(single_sequence_kv_bytes(
      model->config(), args.prompt_tokens + args.gen_tokens + 1, m.kv_dtype));
  m.depth = time_depths(*model, args, m.kv_dtype, pool.size(), memory, bar);
  if (progress) progress->finish();
  const nlohmann::ordered_json out = bench_report(*model, args, options, pool.size(), m, memory);
  // On stderr in both forms, so that a --json run read by a script is warned too.
  const std::string low_share = low_cpu_share_warning(
      {m.t.decode_cpu_share, m.t.prefill_cpu_share, m.bw.cpu_share}, pool.size());
  if (!low_share.empty()) log_warn("bench: {}", low_share);
  if (args.json) {
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  print_table(out, args, model->config(), m.bytes);
}

}  // namespace

void register_bench(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bench", "Prefill and decode speed against this machine's measured memory bandwidth");
  auto args = std::make_shared<BenchArgs>();
  add_model_flag(cmd, args->model, "Checkpoint directory (required but with --compare)");
  cmd->add_option("--prompt-tokens", args->prompt_tokens, "Prompt length")->capture_default_str();
  cmd->add_option("--gen-tokens", args->gen_tokens, "Decoded tokens")->capture_default_str();
  cmd->add_option("--prefill-chunk", args->prefill_chunk,
                  "Prompt tokens per model call (lm_head runs once per call)")
      ->capture_default_str();
  add_threads_flag(cmd, args->threads, "Worker threads");
  add_weight_pages_flag(cmd, args->huge_page_weights);
  cmd->add_option("--repeat", args->repeat, "Timed runs; the fastest is reported")
      ->capture_default_str();
  cmd->add_option("--bandwidth-mib", args->bandwidth_mib, "Buffer size of the bandwidth test")
      ->capture_default_str();
  cmd->add_option("--moe-path", args->moe_path, "MoE path: fast, or dequant (experts as bf16)")
      ->check(CLI::IsMember({"fast", "dequant"}));
  add_backend_flags(cmd, args->backend, args->cpu_moe);
  cmd->add_flag("--json", args->json, "Print the results as JSON");
  add_parallel_flags(cmd, args->parallel);
  add_kv_cache_dtype_flag(cmd, args->kv_cache_dtype);
  add_activations_flag(cmd, args->activations);
  add_batch_invariant_flag(cmd, args->batch_invariant);
  add_speculative_config_flag(cmd, args->speculative_config);
  cmd->add_option("--replay", args->replay,
                  "Speculative decoding on recorded text: JSONL lines {\"prompt\": ..., "
                  "\"output\": ...} decoded as forced tokens with and without "
                  "--speculative-config, alternating");
  cmd->add_option("--depth", args->depths,
                  "Also time --gen-tokens decode steps after this many tokens of context "
                  "(repeatable, e.g. --depth 2048 --depth 32768)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--depth-fill", args->depth_fill,
                  "How the context is filled: tile (a real 512-token prefill copied over the "
                  "cache; same decode cost) or prefill (all of it, slow)")
      ->check(CLI::IsMember({"tile", "prefill"}))
      ->capture_default_str();
  cmd->add_flag("--quiet", args->quiet, "No progress bar");
  add_sweep_flags(cmd, args->sweep);
  cmd->callback([args] { run_bench(*args); });
}

}  // namespace minimax::cli
