// `minimax generate --model DIR --prompt TEXT [--chat] [--system S] [--max-tokens N] [sampling]
// [--seed S] [--threads T] [--moe-path fast|dequant]`: one completion streamed to stdout as it is
// produced; prompt and decode speed on stderr at the end. Sampling defaults come from the
// checkpoint's generation_config.json; the flags override them.
#include <unistd.h>

#include <cstdio>
#include <random>

#include "base/error.h"
#include "base/log.h"
#include "cli/activations_flag.h"
#include "cli/backend_flag.h"
#include "cli/commands.h"
#include "cli/kv_cache_flag.h"
#include "cli/kv_memory.h"
#include "cli/model_flag.h"
#include "cli/model_path_check.h"
#include "cli/parallel_flags.h"
#include "cli/speculative_flag.h"
#include "cli/threads_flag.h"
#include "cli/weight_pages_flag.h"
#include "runtime/model_session.h"
#include "runtime/spec/draft_head.h"
#include "runtime/spec/model_step_cost.h"
#include "runtime/text_model.h"

namespace minimax::cli {
namespace {

struct GenerateArgs {
  std::string model, prompt, system, moe_path = "fast", backend = "cpu", thinking_mode;
  bool cpu_moe = false;
  bool chat = false, quiet = false;
  int64_t max_tokens = 0, context = 0;
  size_t threads = 0;
  bool huge_page_weights = true;  // --weight-pages
  std::vector<std::string> stop;
  SamplingOverrides sampling;
  ParallelRequest parallel;
  std::string kv_cache_dtype = "auto", activations, speculative_config;
  bool batch_invariant = false;
};

void print_stats(const GenerationResult& r) {
  const GenerationStats& s = r.stats;
  const int64_t computed = s.prompt_tokens - s.reused_prompt_tokens;
  std::string reason(finish_reason_name(r.finish));
  if (r.stop_token >= 0) reason += fmt::format(" (end-of-sequence token {})", r.stop_token);
  if (!r.stop_string.empty()) reason += fmt::format(" (stop string \"{}\")", r.stop_string);
  std::fprintf(stderr,
               "\n[prompt: %lld tokens in %.3f s, %.1f tok/s | decode: %lld tokens in %.3f s, "
               "%.2f tok/s | finish: %s]\n",
               static_cast<long long>(s.prompt_tokens), s.prefill_seconds,
               s.prefill_seconds > 0 ? computed / s.prefill_seconds : 0.0,
               static_cast<long long>(s.generated_tokens), s.decode_seconds,
               s.decode_steps > 0 && s.decode_seconds > 0 ? s.decode_steps / s.decode_seconds : 0.0,
               reason.c_str());
  if (s.spec_drafts > 0 || s.spec_draft_tokens > 0)
    std::fprintf(
        stderr,
        "[speculative: %lld verify steps with drafts, %lld of %lld draft tokens accepted, "
        "%.2f tokens per forward pass]\n",
        static_cast<long long>(s.spec_drafts), static_cast<long long>(s.spec_accepted_tokens),
        static_cast<long long>(s.spec_draft_tokens),
        s.decode_steps > 0 ? static_cast<double>(s.generated_tokens - 1) / s.decode_steps : 0.0);
}

void run_generate(const GenerateArgs& args) {
  const std::optional<SpeculativeConfig> spec = speculative_config_of(args.speculative_config);
  ModelOptions options;
  options.cpu = cpu_kernel_config(
      args.activations, args.batch_invariant || spec.has_value(), cpu_environment(),
      args.batch_invariant ? "--batch-invariant" : "--speculative-config");
  options.backend = resolve_backend(args.backend, args.cpu_moe);
  options.cpu_moe = args.cpu_moe;
  options.moe_path = parse_moe_path(args.moe_path, "--moe-path");
  options.threads = args.threads;
  options.parallel = args.parallel;
  options.show_load_progress = !args.quiet;
  options.memory_available_bytes = available_memory_per_rank();
  options.huge_page_weights = args.huge_page_weights;
  auto model = TextModel::load(args.model, options, ranks());
  if (follow_rank0(model->model())) return;  // the output is rank 0's

  std::string text = args.prompt;
  if (args.chat) {
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    if (!args.system.empty()) messages.push_back({{"role", "system"}, {"content", args.system}});
    messages.push_back({{"role", "user"}, {"content", args.prompt}});
    nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
    if (!args.thinking_mode.empty()) kwargs["thinking_mode"] = args.thinking_mode;
    text = model->render_chat(messages, kwargs);
  } else if (!args.system.empty()) {
    fail("--system: only meaningful with --chat");
  }
  const std::vector<int32_t> prompt = model->encode(text);
  if (prompt.empty()) fail("--prompt: the text encodes to no tokens");

  SamplingOverrides overrides = args.sampling;
  if (!overrides.seed) overrides.seed = std::random_device{}();
  const SamplingParams sampling = apply_overrides(model->text().sampling, overrides);
  const int64_t max_tokens = args.max_tokens > 0                ? args.max_tokens
                             : model->text().max_new_tokens > 0 ? model->text().max_new_tokens
                                                                : 256;
  StopConditions stop = model->default_stop(max_tokens);
  stop.stop_strings = args.stop;
  const int64_t context =
      args.context > 0 ? args.context : static_cast<int64_t>(prompt.size()) + max_tokens;

  ModelSession session(model->model(), context, kDefaultPrefillChunk,
                       kv_cache_dtype(args.kv_cache_dtype));
  Generator generator(session, model->tokenizer());
  if (spec) {
    generator.enable_speculation(*spec, step_cost_model_for(model->model()),
                                 load_draft_head(model->model(), *spec));
    if (!args.quiet) log_info("generate: speculative decoding: {}", describe_speculation(*spec));
  }
  const GenerationResult result =
      generator.generate(prompt, sampling, stop, [](const GenerationEvent& event) {
        std::fwrite(event.text.data(), 1, event.text.size(), stdout);
        std::fflush(stdout);
        return true;
      });
  if (isatty(STDOUT_FILENO)) std::fputc('\n', stdout);
  std::fflush(stdout);
  if (!args.quiet) print_stats(result);
}

}  // namespace

// Shared with `minimax chat` (declared there): the sampling flags over generation_config.
void add_sampling_options(CLI::App* cmd, SamplingOverrides& s) {
  cmd->add_option("--temperature", s.temperature, "0 = greedy (default: generation_config)");
  cmd->add_option("--top-p", s.top_p, "Nucleus mass in (0, 1]");
  cmd->add_option("--top-k", s.top_k, "Keep the k most likely tokens (0 = off)");
  cmd->add_option("--min-p", s.min_p, "Drop tokens below min_p x the top probability");
  cmd->add_option("--repetition-penalty", s.repetition_penalty,
                  "vLLM repetition penalty (1 = off)");
  cmd->add_option("--presence-penalty", s.presence_penalty, "In [-2, 2]");
  cmd->add_option("--frequency-penalty", s.frequency_penalty, "In [-2, 2]");
  cmd->add_option("--seed", s.seed, "Random seed (default: a random one)");
}

void register_generate(CLI::App& app) {
  auto* cmd = app.add_subcommand("generate", "Generate a completion and stream it to stdout");
  auto args = std::make_shared<GenerateArgs>();
  add_model_flag(cmd, args->model, "Checkpoint directory");
  cmd->add_option("--prompt", args->prompt, "Prompt text (with --chat: the user message)")
      ->required();
  cmd->add_flag("--chat", args->chat, "Render the prompt with the chat template");
  cmd->add_option("--system", args->system, "System message (with --chat)");
  cmd->add_option("--thinking-mode", args->thinking_mode,
                  "Chat template thinking_mode (M3): enabled, disabled or adaptive")
      ->check(CLI::IsMember({"enabled", "disabled", "adaptive"}));
  cmd->add_option("--max-tokens", args->max_tokens,
                  "Tokens to generate at most (default: generation_config or 256)");
  cmd->add_option("--stop", args->stop, "Stop string (repeatable); not printed");
  add_sampling_options(cmd, args->sampling);
  cmd->add_option("--context", args->context, "KV cache tokens (default: prompt + max tokens)");
  add_threads_flag(cmd, args->threads, "Worker threads");
  add_weight_pages_flag(cmd, args->huge_page_weights);
  add_parallel_flags(cmd, args->parallel);
  add_kv_cache_dtype_flag(cmd, args->kv_cache_dtype);
  add_activations_flag(cmd, args->activations);
  add_batch_invariant_flag(cmd, args->batch_invariant);
  add_speculative_config_flag(cmd, args->speculative_config);
  cmd->add_option("--moe-path", args->moe_path, "MoE path: fast, or dequant (experts as bf16)")
      ->check(CLI::IsMember({"fast", "dequant"}));
  add_backend_flags(cmd, args->backend, args->cpu_moe);
  cmd->add_flag("--quiet", args->quiet, "No load progress and no timing line on stderr");
  cmd->callback([args] {
    check_model_path(args->model);
    run_generate(*args);
  });
}

}  // namespace minimax::cli
