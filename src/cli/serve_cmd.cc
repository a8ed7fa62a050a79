// `minimax serve DIR|--model DIR [--host H] [--port P] [--api-key K] [--served-model-name NAME]
// [--max-model-len N] [--max-num-seqs N] [--max-num-batched-tokens N] [--kv-cache-memory SIZE]
// [--block-size N] [--reasoning-parser P] [--tool-call-parser P] [--chat-template FILE] ...`:
// the OpenAI-compatible server (serve/openai_service.h) over one engine, vLLM's flag names.
// What can be checked without the weights (the port above all) is checked before they are read.
// Runs until SIGINT / SIGTERM: during start-up a signal exits at once; once serving, the first
// stops accepting and drains for up to --shutdown-timeout seconds, and a second exits at once.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "base/log.h"
#include "checkpoint/arch/architecture.h"
#include "cli/activations_flag.h"
#include "cli/backend_flag.h"
#include "cli/commands.h"
#include "cli/kv_cache_flag.h"
#include "cli/kv_memory.h"
#include "cli/late_routes.h"
#include "cli/memory_plan.h"
#include "cli/model_flag.h"
#include "cli/model_path_check.h"
#include "cli/parallel_flags.h"
#include "cli/recipe_config.h"
#include "cli/serve_preflight.h"
#include "cli/speculative_flag.h"
#include "cli/threads_flag.h"
#include "cli/weight_pages_flag.h"
#include "cli/vllm_flags.h"
#include "model/kv_cache.h"
#include "runtime/bandwidth.h"
#include "runtime/engine.h"
#include "runtime/memory_footprint.h"
#include "runtime/prefill_chunk.h"
#include "runtime/text_model.h"
#include "serve/http_server.h"
#include "serve/openai_service.h"
#include "serve/throughput_log.h"

namespace minimax::cli {
namespace {

struct ServeArgs {
  std::string model, host = "127.0.0.1", api_key, served_model_name, chat_template;
  std::string reasoning_parser = "auto", tool_call_parser = "auto", kv_cache_memory = "auto";
  std::string moe_path = "fast", backend = "cpu";
  bool cpu_moe = false;
  int port = 8000;
  int64_t max_model_len = 0, max_num_seqs = 16, max_batched_tokens = kDefaultPrefillChunk,
          block_size = 16;
  int64_t max_waiting = 64;
  double request_timeout = 600;
  double grammar_mask_budget_ms = EngineOptions{}.grammar_mask_budget_ms;
  double shutdown_timeout = 30;
  size_t threads = 0, http_threads = 64;
  bool huge_page_weights = true;  // --weight-pages
  bool no_prefix_caching = false, quiet = false;
  bool dry_run = false;
  ParallelRequest parallel;
  std::string kv_cache_dtype = "auto", activations, speculative_config;
  std::string allowed_origins, allowed_methods = "*", allowed_headers = "*";  // serve/cors.h
  bool allow_credentials = false;
  bool batch_invariant = false;
  double memory_utilization = 0.9;
  bool allow_long_context = false;
  VllmFlags vllm;
};

// What --kv-cache-memory auto is computed from, once the weights are loaded.
KvMemoryInputs kv_memory_inputs(const ServeArgs& args, const Model& model,
                                const EngineOptions& engine) {
  constexpr int64_t kReserveBytes = int64_t{1} << 30;  // the step workspace and the process
  const ModelConfig& config = model.config();
  KvMemoryInputs in;
  in.host_bytes = usable_memory_bytes();
  in.weights_bytes = static_cast<int64_t>(model.weights().mapped_bytes);
  in.reserve_bytes =
      kReserveBytes +
      (engine.speculative ? draft_memory_bytes(*engine.speculative, engine.prefix_caching) : 0);
  in.utilization = args.memory_utilization;
  in.ranks_on_host = ranks_on_this_host();
  // Each rank holds its KV heads' part of a token: the pool is sized per rank.
  in.bytes_per_token = kv_bytes_per_token(config, model.plan(), engine.kv_cache_dtype);
  const int64_t context =
      args.max_model_len > 0 ? args.max_model_len : config.max_position_embeddings;
  in.tokens_wanted = args.max_num_seqs * std::max<int64_t>(context, 1);
  return in;
}

// "1GiB", "512MiB", "300MB", "1000000" → bytes.
int64_t parse_size(const std::string& text, std::string_view flag) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    fail("{}: '{}' is not a size (e.g. 512MiB, 2GiB)", flag, text);
  }
  const std::string unit = text.substr(used);
  double scale = 1;
  if (unit == "" || unit == "B")
    scale = 1;
  else if (unit == "KiB")
    scale = 1024.0;
  else if (unit == "MiB")
    scale = 1024.0 * 1024;
  else if (unit == "GiB")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "KB" || unit == "K")
    scale = 1e3;
  else if (unit == "MB" || unit == "M")
    scale = 1e6;
  else if (unit == "GB" || unit == "G")
    scale = 1e9;
  else
    fail("{}: unknown unit '{}' in '{}' (B, KiB, MiB, GiB, KB, MB, GB)", flag, unit, text);
  if (value <= 0) fail("{}: must be positive, got '{}'", flag, text);
  return static_cast<int64_t>(value * scale);
}

// "auto" → `auto_name`, the architecture record's default; "none" → off.
bool resolve_parser(const std::string& name, std::string_view auto_name, std::string_view flag,
                    ParserFormat& format) {
  if (name == "none") return false;
  format = parse_parser_format(name == "auto" ? auto_name : std::string_view(name), flag);
  return true;
}

std::string read_text_file(const std::string& path, std::string_view flag) {
  std::ifstream in(path);
  if (!in) fail("{}: cannot read '{}'", flag, path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// --api-key, or else the environment's MINIMAX_API_KEY.
std::string api_key_of(const ServeArgs& args) {
  if (!args.api_key.empty()) return args.api_key;
  const char* env = std::getenv("MINIMAX_API_KEY");
  return env != nullptr ? env : "";
}

// What is checked and parsed before the weights are read: every flag, the backend, the key.
struct Preflight {
  bool auto_kv_memory = true;
  int64_t kv_cache_bytes = 0;
  CorsOptions cors;
  std::string chat_template;
  std::optional<SpeculativeConfig> speculative;  // --speculative-config
};

Preflight check_before_loading(const ServeArgs& args, bool serves_http) {
  if (serves_http)
    for (const std::string& note : vllm_flag_notes(args.vllm)) log_info("serve: note: {}", note);
  parse_reasoning_choice(args.reasoning_parser, "minimax_m2");
  if (args.tool_call_parser != "auto" && args.tool_call_parser != "none")
    parse_parser_format(args.tool_call_parser, "--tool-call-parser");
  check_backend_built(args.backend);
  resolve_backend(args.backend, args.cpu_moe);
  parse_moe_path(args.moe_path, "--moe-path");
  kv_cache_dtype(args.kv_cache_dtype);
  if (args.shutdown_timeout < 0)
    fail("--shutdown-timeout: must be >= 0, got {}", args.shutdown_timeout);
  Preflight pre;
  pre.speculative = speculative_config_of(args.speculative_config);
  pre.auto_kv_memory = args.kv_cache_memory == "auto";
  pre.kv_cache_bytes =
      pre.auto_kv_memory ? 0 : parse_size(args.kv_cache_memory, "--kv-cache-memory");
  if (!args.allowed_origins.empty()) {
    pre.cors.origins = parse_cors_list(args.allowed_origins, "--allowed-origins");
    pre.cors.methods = parse_cors_list(args.allowed_methods, "--allowed-methods");
    pre.cors.headers = parse_cors_list(args.allowed_headers, "--allowed-headers");
  }
  pre.cors.allow_credentials = args.allow_credentials;
  check_cors_options(pre.cors);
  if (serves_http) {
    if (const std::string warning = check_api_key(api_key_of(args), args.host); !warning.empty())
      log_warn("serve: {}", warning);
    if (!args.chat_template.empty())
      pre.chat_template = read_text_file(args.chat_template, "--chat-template");
  }
  return pre;
}

HttpServerOptions http_options(const ServeArgs& args, const CorsOptions& cors) {
  HttpServerOptions http;
  http.host = args.host;
  http.port = args.port;
  http.api_key = api_key_of(args);
  http.threads = args.http_threads;
  http.cors = cors;
  return http;
}

// `serve --dry-run`: the whole preflight, the port bound and let go, and the memory plan; no
// weight is read. Error (a nonzero exit) naming what would stop `serve`.
void dry_run(const ServeArgs& args, const CLI::App& cmd) {
  std::fputs(recipe_of(cmd, {"dry-run"}).c_str(), stdout);
  const Preflight pre = check_before_loading(args, true);
  check_model_path(args.model);
  {
    LateRoutes no_routes;
    HttpServer server(no_routes, http_options(args, pre.cors));
    std::printf("# port %d of %s can be bound\n", server.bind(), args.host.c_str());
  }
  MemoryPlanInputs in;
  in.config = load_model_config(args.model);
  in.quant = load_quant_config(args.model);
  in.parallel = args.parallel;
  in.kv_dtype = kv_cache_dtype(args.kv_cache_dtype);
  in.kv_cache_memory = args.kv_cache_memory;
  in.kv_cache_bytes = pre.kv_cache_bytes;
  in.utilization = args.memory_utilization;
  in.ranks_on_host = ranks_on_this_host();
  in.context = args.max_model_len;
  in.max_num_seqs = args.max_num_seqs;
  if (pre.speculative)
    in.draft_bytes = draft_memory_bytes(*pre.speculative, !args.no_prefix_caching);
  in.host_bytes = usable_memory_bytes();
  in.available_bytes = available_memory_bytes();
  ThreadPool pool(args.threads);
  in.read_gbps = measure_bandwidth(pool, size_t{256} << 20, 3).read_gbps;
  in.read_gbps_source = fmt::format("measured now, {} threads", pool.size());
  const MemoryPlan plan = plan_memory(in);
  std::fputs(plan.text.c_str(), stdout);
  if (!plan.fits && args.max_model_len > 0)
    fail("--dry-run: the plan above does not hold --max-model-len {} on this host",
         args.max_model_len);
  std::printf("# dry run ok: serve would start with these flags\n");
}

// What the signal watcher and the main thread share.
struct ShutdownState {
  std::mutex mutex;
  HttpServer* server = nullptr;  // set once the server is bound; null during start-up
  bool done = false;             // the main thread is past run(): the watcher just returns
};

// The exit status of a process ended by signal `number`, as a shell reports a killed process.
int signal_exit_status(int number) { return 128 + number; }

// Waits up to `seconds` for SIGINT/SIGTERM; the signal's number, or 0 on timeout.
int wait_signal(const sigset_t& signals, double seconds) {
  const auto whole = static_cast<time_t>(seconds);
  timespec timeout{whole, static_cast<long>((seconds - static_cast<double>(whole)) * 1e9)};
  const int got = sigtimedwait(&signals, nullptr, &timeout);
  return got > 0 ? got : 0;
}

// The signal watcher. Model loading cannot be interrupted part-way, so a signal before the server
// is bound ends the process at once (nothing is served yet, nothing to drain). After that the
// first signal stops the listener and lets open requests finish; past `shutdown_timeout` seconds
// the remaining connections are shut down, and if the process still has not finished 5 s later
// it exits anyway. A second signal at any point exits at once.
void watch_signals(const sigset_t& signals, ShutdownState& state, double shutdown_timeout) {
  int received = 0;
  sigwait(&signals, &received);
  {
    std::lock_guard lock(state.mutex);
    if (state.done) return;
    if (state.server == nullptr) {
      log_info("serve: signal {} during start-up, exiting", received);
      std::_Exit(signal_exit_status(received));
    }
  }
  log_info("serve: signal {}, shutting down (open requests get {} s; a second signal exits now)",
           received, shutdown_timeout);
  // The server is reached under the lock only: the main thread unregisters it before it is
  // destroyed. True when the main thread is done.
  auto with_server = [&state](auto action) {
    std::lock_guard lock(state.mutex);
    if (state.server != nullptr) action(*state.server);
    return state.done;
  };
  // Polls in steps of 0.1 s: stop() is repeated in case run() was still starting its listener.
  auto wait = [&](double seconds) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < deadline) {
      if (with_server([](HttpServer& server) { server.stop(); })) return true;
      if (const int again = wait_signal(signals, 0.1)) {
        if (with_server([](HttpServer&) {})) return true;  // the main thread's wake-up call
        log_info("serve: second signal {}, exiting now", again);
        std::_Exit(signal_exit_status(again));
      }
    }
    return with_server([](HttpServer&) {});
  };
  if (wait(shutdown_timeout)) return;
  int dropped = 0;
  with_server([&dropped](HttpServer& server) { dropped = server.drop_connections(); });
  log_warn("serve: requests still open after --shutdown-timeout {} s; dropped {} connection(s)",
           shutdown_timeout, dropped);
  if (wait(5)) return;
  log_warn("serve: still not finished 5 s after dropping the connections; exiting");
  std::_Exit(1);
}

void run_serve(const ServeArgs& args) {
  // Signals are taken by a watcher thread, so every other thread runs with them blocked. The
  // watcher starts first: start-up (the model load) can take minutes and must be interruptible.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  ShutdownState state;
  std::thread watcher([&state, signals, timeout = args.shutdown_timeout] {
    watch_signals(signals, state, timeout);
  });
  // Ends the watcher on every way out of this function (an exception from the load included).
  struct JoinWatcher {
    ShutdownState& state;
    std::thread& watcher;
    ~JoinWatcher() {
      {
        std::lock_guard lock(state.mutex);
        state.done = true;
      }
      pthread_kill(watcher.native_handle(), SIGTERM);
      watcher.join();
    }
  } join_watcher{state, watcher};

  // Preflight: everything that can fail without the weights fails before they are read (issue 39:
  // a taken port or a wrong file name used to cost a full load). Only rank 0 serves HTTP, and on
  // several hosts only its host need hold the chat template.
  const bool serves_http = ranks() == nullptr || ranks()->rank() == 0;
  const Preflight pre = check_before_loading(args, serves_http);
  const std::optional<SpeculativeConfig>& spec = pre.speculative;
  // Declared before the server, so that the server (and its request threads) ends first.
  std::unique_ptr<TextModel> model;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<OpenAiService> routes;
  LateRoutes late_routes;
  std::unique_ptr<HttpServer> server;
  int port = 0;
  if (serves_http) {
    server = std::make_unique<HttpServer>(late_routes, http_options(args, pre.cors));
    port = server->bind();
    log_info("serve: port {} of {} is ours; loading {}", port, args.host, args.model);
  }

  ModelOptions model_options;
  model_options.cpu = cpu_kernel_config(
      args.activations, args.batch_invariant || spec.has_value(), cpu_environment(),
      args.batch_invariant ? "--batch-invariant" : "--speculative-config");
  model_options.backend = resolve_backend(args.backend, args.cpu_moe);
  model_options.cpu_moe = args.cpu_moe;
  model_options.moe_path = parse_moe_path(args.moe_path, "--moe-path");
  model_options.threads = args.threads;
  model_options.parallel = args.parallel;
  model_options.show_load_progress = !args.quiet;
  model_options.memory_available_bytes = available_memory_per_rank();
  model_options.huge_page_weights = args.huge_page_weights;
  model = TextModel::load(args.model, model_options, ranks());
  if (follow_rank0(model->model())) return;  // HTTP and scheduling are rank 0's
  if (!args.chat_template.empty()) model->set_chat_template(pre.chat_template, args.chat_template);
  const ModelConfig& config = model->model().config();

  ServiceOptions service;
  service.served_model_name =
      args.served_model_name.empty() ? model_directory_name(args.model) : args.served_model_name;
  ParserFormat tool_format = ParserFormat::kMinimaxM2;
  const ArchitectureRecord& record = config.architecture_record();
  const ReasoningChoice reasoning =
      parse_reasoning_choice(args.reasoning_parser, record.reasoning_parser);
  service.parse_reasoning = reasoning.parse;
  service.append_think = reasoning.append_think;
  service.parser_format = reasoning.format;
  service.parse_tool_calls = resolve_parser(args.tool_call_parser, record.tool_call_parser,
                                            "--tool-call-parser", tool_format);
  if (service.parse_reasoning && service.parse_tool_calls && tool_format != service.parser_format)
    fail("--reasoning-parser and --tool-call-parser name different formats ({} and {})",
         args.reasoning_parser, args.tool_call_parser);
  if (!service.parse_reasoning) service.parser_format = tool_format;
  service.request_timeout_seconds = args.request_timeout;

  EngineOptions engine_options;
  // Before the pool: a draft head's memory (and its tap store, with prefix caching) comes off it.
  engine_options.speculative = spec;
  engine_options.prefix_caching = !args.no_prefix_caching;
  engine_options.kv_cache_bytes = pre.kv_cache_bytes;
  engine_options.kv_block_size = args.block_size;
  engine_options.kv_cache_dtype = kv_cache_dtype(args.kv_cache_dtype);
  if (pre.auto_kv_memory) {
    const KvMemoryInputs in = kv_memory_inputs(args, model->model(), engine_options);
    const KvMemoryPlan plan = plan_kv_memory(in);
    log_info("serve: {}", plan.summary);
    // The engine counts the whole model's KV per token; this rank holds its heads' part of it.
    const ParallelPlan single = make_parallel_plan({}, 1, 0, config);
    engine_options.kv_cache_bytes =
        plan.bytes / in.bytes_per_token *
        kv_bytes_per_token(config, single, engine_options.kv_cache_dtype);
  }
  engine_options.max_num_seqs = args.max_num_seqs;
  engine_options.max_batched_tokens = args.max_batched_tokens;
  engine_options.max_waiting = args.max_waiting;
  engine_options.grammar_mask_budget_ms = args.grammar_mask_budget_ms;
  engine_options.model_name = service.served_model_name;
  engine_options.max_model_len = args.max_model_len;  // 0: the engine resolves it
  engine_options.kv_cache_bytes_name = "--kv-cache-memory " + args.kv_cache_memory;
  engine_options.max_model_len_name = "--max-model-len";
  engine_options.allow_long_context = args.allow_long_context;
  engine_options.allow_long_context_name = "--allow-long-max-model-len";
  if (spec) log_info("serve: speculative decoding: {}", describe_speculation(*spec));
  engine = std::make_unique<Engine>(model->model(), model->tokenizer(), engine_options);
  routes = std::make_unique<OpenAiService>(*model, *engine, service);
  late_routes.set(*routes);
  // Registers the server with the watcher until it is destroyed (declared after it).
  struct Registration {
    ShutdownState& state;
    Registration(ShutdownState& s, HttpServer& server) : state(s) {
      std::lock_guard lock(state.mutex);
      state.server = &server;
    }
    ~Registration() {
      std::lock_guard lock(state.mutex);
      state.server = nullptr;
      state.done = true;
    }
  } registration(state, *server);
  log_info(
      "serve: '{}' on http://{}:{} (max_model_len {}, {} KV blocks of {} tokens, activations "
      "{}{}{})",
      service.served_model_name, args.host, port, engine->options().max_model_len,
      engine->options().kv_cache_blocks, engine->options().kv_block_size,
      activation_precision_name(model_options.cpu.activations),
      model_options.cpu.batch_invariant ? ", batch-invariant" : "",
      api_key_of(args).empty() ? "" : ", API key required");
  // Every 10 s while requests run; ends (its thread joined) before the engine it reads.
  const ThroughputLog throughput(engine->metrics());
  server->run();
  // run() also returns when the listener fails; join_watcher wakes the watcher then.
}

}  // namespace

void register_serve(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "OpenAI-compatible HTTP server (chat, completions)");
  auto args = std::make_shared<ServeArgs>();
  add_model_flag(cmd, args->model, "Checkpoint directory");
  cmd->add_option("--host", args->host, "Address to listen on (default 127.0.0.1)");
  // Checked here: the socket layer takes the port as 16 bits, so 70000 would serve on 4464.
  cmd->add_option("--port", args->port, "Port, 1-65535 (default 8000; 0 = any free port)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--api-key", args->api_key,
                  "Require 'Authorization: Bearer KEY' (or x-api-key) on every route but /health, "
                  "/metrics and the chat page (or env MINIMAX_API_KEY)");
  cmd->add_option("--served-model-name", args->served_model_name,
                  "Model id in the API (default: the model directory's name)");
  cmd->add_option("--max-model-len", args->max_model_len,
                  "Prompt + output tokens per request (default: the model's context, capped by "
                  "the KV cache)");
  cmd->add_option("--max-num-seqs", args->max_num_seqs, "Requests running at once (default 16)");
  cmd->add_option(
      "--max-num-batched-tokens", args->max_batched_tokens,
      fmt::format("Tokens per engine step; longer prompts are prefilled in chunks (default {}; "
                  "512 holds the other streams back for less time)",
                  kDefaultPrefillChunk));
  cmd->add_option("--kv-cache-memory", args->kv_cache_memory,
                  "KV cache size, e.g. 512MiB, 4GiB, or auto (the default): --memory-utilization "
                  "of the memory left after the weights, at most what --max-num-seqs requests "
                  "of the whole context fill");
  cmd->add_option("--memory-utilization,--gpu-memory-utilization", args->memory_utilization,
                  "Share of this host's memory (MemTotal or the cgroup limit) left after the "
                  "weights and a 1 GiB reserve that --kv-cache-memory auto gives the KV cache "
                  "(default 0.9)")
      ->check(CLI::Range(0.01, 1.0));
  cmd->add_flag("--allow-long-max-model-len", args->allow_long_context,
                "Accept a --max-model-len above the model's own context");
  cmd->add_option("--block-size", args->block_size, "KV cache block size in tokens (default 16)");
  cmd->add_option("--max-waiting", args->max_waiting,
                  "Queued requests beyond which new ones get 429 (default 64)");
  CLI::Option* no_prefix_caching =
      cmd->add_flag("--no-enable-prefix-caching", args->no_prefix_caching,
                    "Do not reuse KV blocks of identical prompt prefixes");
  cmd->add_option("--reasoning-parser", args->reasoning_parser,
                  "minimax_m2, minimax_m3, minimax_m2_append_think (no split; content keeps "
                  "<think>...</think>), none, or auto (from the architecture)");
  cmd->add_option("--tool-call-parser", args->tool_call_parser,
                  "minimax_m2, minimax_m3, none, or auto (from the architecture)");
  cmd->add_option("--chat-template", args->chat_template,
                  "Jinja chat template file replacing the checkpoint's");
  cmd->add_option("--request-timeout", args->request_timeout,
                  "Seconds a request may take before it fails with 408 (0 = none; default 600)");
  cmd->add_option(
         "--grammar-mask-budget-ms", args->grammar_mask_budget_ms,
         "Milliseconds of CPU one constrained request's token mask may take in a step before "
         "that request ends with an error (0 = no limit; default 20)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--shutdown-timeout", args->shutdown_timeout,
                  "Seconds open requests may take after SIGTERM/SIGINT before their connections "
                  "are dropped (default 30)");
  add_threads_flag(cmd, args->threads, "Compute threads");
  add_weight_pages_flag(cmd, args->huge_page_weights);
  add_parallel_flags(cmd, args->parallel);
  add_kv_cache_dtype_flag(cmd, args->kv_cache_dtype);
  add_activations_flag(cmd, args->activations);
  add_batch_invariant_flag(cmd, args->batch_invariant);
  add_speculative_config_flag(cmd, args->speculative_config);
  cmd->add_option("--http-threads", args->http_threads,
                  "Requests handled at once (default 64); open connections are not limited by it");
  cmd->add_option("--allowed-origins", args->allowed_origins,
                  "CORS: origins browser apps may call from, as a JSON list or comma-separated, "
                  "'*' for any (default: none, no CORS headers)")
      ->group("CORS");
  cmd->add_option("--allowed-methods", args->allowed_methods,
                  "CORS: methods a preflight allows (default '*': the route's own)")
      ->group("CORS");
  cmd->add_option("--allowed-headers", args->allowed_headers,
                  "CORS: request headers a preflight allows (default '*': those it asks for)")
      ->group("CORS");
  cmd->add_flag("--allow-credentials", args->allow_credentials,
                "CORS: allow credentials (cookies) from the listed origins; not with '*'")
      ->group("CORS");
  cmd->add_option("--moe-path", args->moe_path, "MoE path: fast, or dequant (experts as bf16)");
  add_backend_flags(cmd, args->backend, args->cpu_moe);
  cmd->add_flag("--quiet", args->quiet, "No load progress on stderr");
  add_vllm_flags(cmd, args->vllm, no_prefix_caching);
  add_recipe_config(cmd);
  cmd->add_flag("--dry-run", args->dry_run,
                "Check everything serve checks before loading (flags, recipe keys, model path, "
                "backend, API key, port), print the flags in effect as a recipe and the memory "
                "plan, and exit without loading the model");
  cmd->callback([args, cmd] {
    if (args->dry_run) return dry_run(*args, *cmd);
    check_model_path(args->model);
    run_serve(*args);
  });
}

}  // namespace minimax::cli
