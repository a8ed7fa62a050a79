// `minimax bench --model DIR [--prompt-tokens N] [--gen-tokens N] [--threads T] [--json]`: this
// machine's copy and read bandwidth measured in the same run with the same threads, then prefill
// and decode speed, the active weight bytes per decoded token, the bandwidth decode achieves
// (bytes/token × tok/s) and its ratio to the measured bandwidth. Greedy decode; no timing is
// taken before a warm-up pass has faulted the mapped weights in.
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "cli/commands.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_features.h"
#include "model/model.h"
#include "runtime/bandwidth.h"
#include "runtime/decode_bytes.h"
#include "runtime/model_session.h"
#include "runtime/sampler.h"

namespace minimax::cli {
namespace {

struct BenchArgs {
  std::string model, moe_path = "fast", backend = "cpu";
  int64_t prompt_tokens = 128, gen_tokens = 32;
  size_t threads = 0;
  int repeat = 3;
  size_t bandwidth_mib = 1024;
  bool json = false;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Which kernels run each op: the backend's own or the reference fallback.
nlohmann::ordered_json kernel_sources(const KernelOps& ops) {
  const KernelOps& ref = reference_ops();
  const auto source = [](bool is_reference) { return is_reference ? "reference" : "cpu"; };
  return {{"linear", source(ops.linear == ref.linear)},
          {"moe", source(ops.moe == ref.moe)},
          {"attention", source(ops.attention == ref.attention)},
          {"rms_norm", source(ops.rms_norm == ref.rms_norm)},
          {"rope", source(ops.rope == ref.rope)},
          {"router", source(ops.route == ref.route)},
          {"embedding", source(ops.embedding == ref.embedding)}};
}

struct Timings {
  double prefill_seconds = 1e30, decode_seconds = 1e30, cold_prefill_seconds = 0;
};

Timings time_model(Model& model, const BenchArgs& args) {
  // Prompt ids spread over the vocabulary, fixed so that runs compare.
  std::vector<int32_t> prompt(args.prompt_tokens);
  SampleRng rng(1234);
  for (int32_t& id : prompt) id = static_cast<int32_t>(rng.next_unit() * model.config().vocab_size);
  ModelSession session(model, args.prompt_tokens + args.gen_tokens + 1);
  Timings t;
  auto start = std::chrono::steady_clock::now();
  session.prefill(prompt);  // warm-up: faults the mapped weights in
  t.cold_prefill_seconds = seconds_since(start);
  for (int r = 0; r < args.repeat; ++r) {
    session.reset();
    start = std::chrono::steady_clock::now();
    std::vector<float> logits = session.prefill(prompt);
    t.prefill_seconds = std::min(t.prefill_seconds, seconds_since(start));
    start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < args.gen_tokens; ++i) logits = session.decode(argmax(logits));
    t.decode_seconds = std::min(t.decode_seconds, seconds_since(start));
  }
  return t;
}

void run_bench(const BenchArgs& args) {
  if (args.prompt_tokens <= 0) fail("--prompt-tokens: must be > 0, got {}", args.prompt_tokens);
  if (args.gen_tokens <= 0) fail("--gen-tokens: must be > 0, got {}", args.gen_tokens);
  if (args.repeat <= 0) fail("--repeat: must be > 0, got {}", args.repeat);
  ThreadPool pool(args.threads);
  const Bandwidth bw = measure_bandwidth(pool, args.bandwidth_mib << 20);

  ModelOptions options;
  options.backend = parse_backend_kind(args.backend, "--backend");
  options.moe_path = parse_moe_path(args.moe_path, "--moe-path");
  options.pool = &pool;
  auto model = Model::load(args.model, options);
  const DecodeBytes bytes = decode_bytes_per_token(model->weights(), model->config());
  const Timings t = time_model(*model, args);

  const double prefill_tps = args.prompt_tokens / t.prefill_seconds;
  const double decode_tps = args.gen_tokens / t.decode_seconds;
  const double achieved_gbps = bytes.total() * decode_tps / 1e9;
  const ModelConfig& c = model->config();
  nlohmann::ordered_json out = {
      {"model", args.model},
      {"architecture", c.architecture},
      {"weights", quant_scheme_name(model->quant().scheme)},
      {"moe_path", moe_path_name(options.moe_path)},
      {"kernels", model->ops().name},
      {"cpu_isa", cpu_isa_name(default_cpu_isa())},
      {"kernel_sources", kernel_sources(model->ops())},
      {"threads", pool.size()},
      {"copy_gbps", bw.copy_gbps},
      {"read_gbps", bw.read_gbps},
      {"bandwidth_buffer_mib", args.bandwidth_mib},
      {"prompt_tokens", args.prompt_tokens},
      {"cold_prefill_seconds", t.cold_prefill_seconds},
      {"prefill_seconds", t.prefill_seconds},
      {"prefill_tok_s", prefill_tps},
      {"gen_tokens", args.gen_tokens},
      {"decode_seconds", t.decode_seconds},
      {"decode_tok_s", decode_tps},
      {"repeat", args.repeat},
      {"bytes_per_token",
       {{"attention", bytes.attention},
        {"router", bytes.router},
        {"routed_experts", bytes.routed_experts},
        {"shared_expert", bytes.shared_expert},
        {"dense_ffn", bytes.dense_ffn},
        {"norms", bytes.norms},
        {"embedding_row", bytes.embedding_row},
        {"lm_head", bytes.lm_head},
        {"total", bytes.total()}}},
      {"achieved_gbps", achieved_gbps},
      {"ratio_to_copy", achieved_gbps / bw.copy_gbps},
      {"ratio_to_read", achieved_gbps / bw.read_gbps},
  };
  if (args.json) {
    std::printf("%s\n", out.dump(2).c_str());
    return;
  }
  std::string sources;
  for (const auto& [op, source] : out["kernel_sources"].items())
    sources += fmt::format("{}{}={}", sources.empty() ? "" : " ", op, source.get<std::string>());
  const auto mb = [](uint64_t b) { return b / 1e6; };
  std::printf(
      "%s",
      fmt::format(
          "model            {} ({}, {}, {} layers, {} experts top-{})\n"
          "kernels          {} ({}; MoE path {}): {}\n"
          "threads          {}\n"
          "copy bandwidth   {:.2f} GB/s (memcpy of {} MiB)\n"
          "read bandwidth   {:.2f} GB/s (streaming sum)\n"
          "prefill          {} tokens in {:.3f} s: {:.1f} tok/s (first, cold: {:.3f} s)\n"
          "decode           {} tokens in {:.3f} s: {:.2f} tok/s, {:.1f} ms/token\n"
          "bytes/token      {:.1f} MB: attention {:.1f}, router {:.2f}, experts {:.1f}, "
          "shared {:.1f}, dense {:.1f}, embedding row {:.3f}, lm_head {:.1f}\n"
          "achieved         {:.2f} GB/s\n"
          "ratio            {:.3f} of copy bandwidth, {:.3f} of read bandwidth\n",
          args.model, c.architecture, quant_scheme_name(model->quant().scheme), c.num_layers,
          c.num_experts, c.experts_per_tok, model->ops().name, cpu_isa_name(default_cpu_isa()),
          moe_path_name(options.moe_path), sources, pool.size(), bw.copy_gbps, args.bandwidth_mib,
          bw.read_gbps, args.prompt_tokens, t.prefill_seconds, prefill_tps, t.cold_prefill_seconds,
          args.gen_tokens, t.decode_seconds, decode_tps, 1e3 * t.decode_seconds / args.gen_tokens,
          mb(bytes.total()), mb(bytes.attention), mb(bytes.router), mb(bytes.routed_experts),
          mb(bytes.shared_expert), mb(bytes.dense_ffn), mb(bytes.embedding_row), mb(bytes.lm_head),
          achieved_gbps, achieved_gbps / bw.copy_gbps, achieved_gbps / bw.read_gbps)
          .c_str());
}

}  // namespace

void register_bench(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bench", "Prefill and decode speed against this machine's measured memory bandwidth");
  auto args = std::make_shared<BenchArgs>();
  cmd->add_option("--model", args->model, "Checkpoint directory")->required();
  cmd->add_option("--prompt-tokens", args->prompt_tokens, "Prompt length")->capture_default_str();
  cmd->add_option("--gen-tokens", args->gen_tokens, "Decoded tokens")->capture_default_str();
  cmd->add_option("--threads", args->threads, "Worker threads (0 = all hardware threads)");
  cmd->add_option("--repeat", args->repeat, "Timed runs; the fastest is reported")
      ->capture_default_str();
  cmd->add_option("--bandwidth-mib", args->bandwidth_mib, "Buffer size of the bandwidth test")
      ->capture_default_str();
  cmd->add_option("--moe-path", args->moe_path, "MoE path: fast, or dequant (experts as bf16)")
      ->check(CLI::IsMember({"fast", "dequant"}));
  cmd->add_option("--backend", args->backend, "Kernels: cpu or reference")
      ->check(CLI::IsMember({"cpu", "reference"}));
  cmd->add_flag("--json", args->json, "Print the results as JSON");
  cmd->callback([args] { run_bench(*args); });
}

}  // namespace minimax::cli
