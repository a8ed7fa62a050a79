// `minimax chat --model DIR`: an interactive conversation over stdin lines. Each turn renders the
// whole conversation with the chat template and reuses the KV cache of the common prefix. The
// model's reasoning is shown apart from the answer: dimmed on a terminal, under "[reasoning]" /
// "[answer]" labels otherwise. The split is the server's parser (serve/parse_pipeline.h, the
// architecture's format, tool calls left as text), so chat and the API agree on what is reasoning.
// Commands: /reset, /exit.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <random>

#include "base/error.h"
#include "cli/activations_flag.h"
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
#include "serve/parse_pipeline.h"

namespace minimax::cli {

void add_sampling_options(CLI::App* cmd, SamplingOverrides& s);  // generate_cmd.cc

namespace {

struct ChatArgs {
  std::string model, system, moe_path = "fast", thinking_mode;
  int64_t max_tokens = 2048, context = 8192;
  size_t threads = 0;
  bool huge_page_weights = true;  // --weight-pages
  bool plain = false, quiet = false;
  SamplingOverrides sampling;
  ParallelRequest parallel;
  std::string kv_cache_dtype = "auto", activations, speculative_config;
  bool batch_invariant = false;
};

// Writes reasoning and answer pieces so that a reader can tell them apart.
class TurnPrinter {
 public:
  explicit TurnPrinter(bool styled) : styled_(styled) {}

  void write(bool reasoning, const std::string& text) {
    if (text.empty()) return;
    if (!started_ || reasoning != reasoning_) switch_to(reasoning);
    std::fwrite(text.data(), 1, text.size(), stdout);
    at_line_start_ = text.back() == '\n';
    std::fflush(stdout);
  }

  void finish() {
    if (styled_ && started_ && reasoning_) std::fputs("\033[0m", stdout);
    if (!at_line_start_) std::fputc('\n', stdout);
    std::fflush(stdout);
  }

 private:
  void switch_to(bool reasoning) {
    if (styled_) {
      if (started_ && !at_line_start_) std::fputc('\n', stdout);
      std::fputs(reasoning ? "\033[2m" : "\033[0m", stdout);
    } else {
      if (started_ && !at_line_start_) std::fputc('\n', stdout);
      std::fputs(reasoning ? "[reasoning]\n" : "[answer]\n", stdout);
    }
    started_ = true;
    reasoning_ = reasoning;
    at_line_start_ = true;
  }

  bool styled_;
  bool started_ = false, reasoning_ = false, at_line_start_ = true;
};

void run_chat(const ChatArgs& args) {
  const std::optional<SpeculativeConfig> spec = speculative_config_of(args.speculative_config);
  ModelOptions options;
  options.cpu = cpu_kernel_config(
      args.activations, args.batch_invariant || spec.has_value(), cpu_environment(),
      args.batch_invariant ? "--batch-invariant" : "--speculative-config");
  options.moe_path = parse_moe_path(args.moe_path, "--moe-path");
  options.threads = args.threads;
  options.parallel = args.parallel;
  options.show_load_progress = !args.quiet;
  options.memory_available_bytes = available_memory_per_rank();
  options.huge_page_weights = args.huge_page_weights;
  auto model = TextModel::load(args.model, options, ranks());
  if (follow_rank0(model->model())) return;  // the conversation is rank 0's
  if (args.context <= 0) fail("--context: must be > 0, got {}", args.context);
  if (args.max_tokens <= 0) fail("--max-tokens: must be > 0, got {}", args.max_tokens);
  SamplingOverrides overrides = args.sampling;
  if (!overrides.seed) overrides.seed = std::random_device{}();
  SamplingParams sampling = apply_overrides(model->text().sampling, overrides);
  validate_sampling_params(sampling);
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
  if (!args.thinking_mode.empty()) kwargs["thinking_mode"] = args.thinking_mode;

  const bool interactive = isatty(STDIN_FILENO);
  const bool styled = isatty(STDOUT_FILENO) && !args.plain;
  const ParserFormat format = parser_format_for(model->model().config().arch);
  // The mode only matters when the rendered prompt does not say whether reasoning is open.
  const ThinkingMode mode = thinking_mode_from_kwargs(nlohmann::json::parse(kwargs.dump()), format);
  ModelSession session(model->model(), args.context, kDefaultPrefillChunk,
                       kv_cache_dtype(args.kv_cache_dtype));
  Generator generator(session, model->tokenizer());
  if (spec)
    generator.enable_speculation(*spec, step_cost_model_for(model->model()),
                                 load_draft_head(model->model(), *spec));
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  const auto reset = [&] {
    messages = nlohmann::ordered_json::array();
    if (!args.system.empty()) messages.push_back({{"role", "system"}, {"content", args.system}});
  };
  reset();
  if (interactive)
    std::fprintf(stderr, "Chatting with %s. /reset starts over, /exit (or end of input) quits.\n",
                 args.model.c_str());

  std::string line;
  for (int turn = 0;; ++turn) {
    if (interactive) std::fputs("> ", stderr);
    if (!std::getline(std::cin, line)) break;
    if (line == "/exit" || line == "/quit") break;
    if (line == "/reset") {
      reset();
      session.reset();
      std::fputs("(conversation cleared)\n", stderr);
      continue;
    }
    if (line.empty()) continue;
    messages.push_back({{"role", "user"}, {"content", line}});
    const std::string prompt_text = model->render_chat(messages, kwargs);
    const std::vector<int32_t> prompt = model->encode(prompt_text);
    if (static_cast<int64_t>(prompt.size()) >= args.context) {
      std::fprintf(stderr,
                   "The conversation is %zu tokens, beyond --context %lld: /reset to start over.\n",
                   prompt.size(), static_cast<long long>(args.context));
      messages.erase(messages.size() - 1);
      continue;
    }
    sampling.seed = *overrides.seed + turn;  // each turn its own reproducible stream
    ParserOptions parser;
    parser.format = format;
    parser.parse_tool_calls = false;  // chat offers no tools: any call markup is answer text
    parser.initial = initial_reasoning_state(prompt_text, format, mode);
    // Markers by spelling, in the prompt and the output: a generation event's text may hold
    // earlier tokens' text, so it cannot be paired with the event's token id.
    ParsePipeline pipeline(parser);
    TurnPrinter printer(styled);
    std::string reasoning, answer;
    const auto show = [&](const ParseDelta& delta) {
      // Within one delta reasoning comes first: the parser never returns from answer to reasoning.
      reasoning += delta.reasoning;
      answer += delta.content;
      printer.write(true, delta.reasoning);
      printer.write(false, delta.content);
    };
    const GenerationResult result = generator.generate(
        prompt, sampling, model->default_stop(args.max_tokens), [&](const GenerationEvent& e) {
          show(pipeline.push_text(e.text));
          return true;
        });
    show(pipeline.finish());
    printer.finish();
    if (!args.quiet)
      std::fprintf(stderr, "[%lld tokens, %.2f tok/s, %lld prompt tokens reused, finish: %s]\n",
                   static_cast<long long>(result.stats.generated_tokens),
                   result.stats.decode_steps > 0 && result.stats.decode_seconds > 0
                       ? result.stats.decode_steps / result.stats.decode_seconds
                       : 0.0,
                   static_cast<long long>(result.stats.reused_prompt_tokens),
                   std::string(finish_reason_name(result.finish)).c_str());
    nlohmann::ordered_json reply = {{"role", "assistant"}, {"content", answer}};
    if (!reasoning.empty()) reply["reasoning_content"] = reasoning;
    messages.push_back(reply);
  }
}

}  // namespace

void register_chat(CLI::App& app) {
  auto* cmd = app.add_subcommand("chat", "Interactive chat over stdin, reasoning shown apart");
  auto args = std::make_shared<ChatArgs>();
  add_model_flag(cmd, args->model, "Checkpoint directory");
  cmd->add_option("--system", args->system, "System message");
  cmd->add_option("--thinking-mode", args->thinking_mode,
                  "Chat template thinking_mode (M3): enabled, disabled or adaptive")
      ->check(CLI::IsMember({"enabled", "disabled", "adaptive"}));
  cmd->add_option("--max-tokens", args->max_tokens, "Tokens per reply at most")
      ->capture_default_str();
  cmd->add_option("--context", args->context, "KV cache tokens for the whole conversation")
      ->capture_default_str();
  add_sampling_options(cmd, args->sampling);
  add_threads_flag(cmd, args->threads, "Worker threads");
  add_weight_pages_flag(cmd, args->huge_page_weights);
  add_parallel_flags(cmd, args->parallel);
  add_kv_cache_dtype_flag(cmd, args->kv_cache_dtype);
  add_activations_flag(cmd, args->activations);
  add_batch_invariant_flag(cmd, args->batch_invariant);
  add_speculative_config_flag(cmd, args->speculative_config);
  cmd->add_option("--moe-path", args->moe_path, "MoE path: fast, or dequant (experts as bf16)")
      ->check(CLI::IsMember({"fast", "dequant"}));
  cmd->add_flag("--plain", args->plain, "Label reasoning with text even on a terminal");
  cmd->add_flag("--quiet", args->quiet, "No load progress and no per-turn statistics on stderr");
  cmd->callback([args] {
    check_model_path(args->model);
    run_chat(*args);
  });
}

}  // namespace minimax::cli
