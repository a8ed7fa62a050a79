// `minimax perplexity --model DIR --file TEXT [--context N] [--kl-divergence-base F
// [--kl-divergence]] [--json]`: the perplexity of a text, and with llama-perplexity's convention
// for the base, the KL divergence of this run from another one's logits: --kl-divergence-base F
// alone writes this run's top-K log-probabilities to F; with --kl-divergence it reads F and
// compares. The scoring is runtime/perplexity.h's; docs/perplexity.md says what each number means.
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/atomic_output.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/progress.h"
#include "checkpoint/model_config.h"
#include "cli/activations_flag.h"
#include "cli/commands.h"
#include "cli/kv_cache_flag.h"
#include "cli/kv_memory.h"
#include "cli/model_flag.h"
#include "cli/model_path_check.h"
#include "cli/parallel_flags.h"
#include "cli/threads_flag.h"
#include "cli/weight_pages_flag.h"
#include "kernels/cpu/linear.h"
#include "runtime/checkpoint_text.h"
#include "runtime/perplexity.h"

namespace minimax::cli {
namespace {

struct PerplexityArgs {
  std::string model, file, base;
  bool compare = false, json = false, quiet = false, force = false;
  int64_t context = 512;
  uint32_t top_k = 32;
  size_t threads = 0;
  bool huge_page_weights = true;  // --weight-pages
  ParallelRequest parallel;
  std::string kv_cache_dtype = "auto", activations;
  bool batch_invariant = false;
};

// The text's ids and windows, checked before the weights are loaded so that bad input fails fast.
struct ScoredText {
  std::vector<int32_t> tokens;
  PerplexityWindows windows;
  std::optional<int32_t> window_bos;
  int64_t vocab = 0;  // of config.json, for checking a base before the weights are in
};

ScoredText read_scored_text(const PerplexityArgs& args) {
  if (!std::filesystem::is_regular_file(args.file)) fail("--file {}: no such file", args.file);
  const std::string text = read_file(args.file);
  if (text.empty()) fail("--file {}: the text is empty", args.file);
  const BpeTokenizer tokenizer = BpeTokenizer::from_file(args.model + "/tokenizer.json");
  const ModelConfig config = load_model_config(args.model);
  const CheckpointText settings = load_checkpoint_text(args.model, tokenizer, config.arch);
  ScoredText out;
  out.tokens = with_context("--file " + args.file,
                            [&] { return perplexity_tokens(text, tokenizer, settings); });
  if (args.context < 4) fail("--context {}: a window needs at least 4 tokens", args.context);
  if (config.max_position_embeddings > 0 && args.context > config.max_position_embeddings)
    fail("--context {}: more than the model's max_position_embeddings ({})", args.context,
         config.max_position_embeddings);
  const auto count = static_cast<int64_t>(out.tokens.size());
  if (count < args.context)
    fail("--file {}: the text is {} tokens; --context {} needs at least {} (one window)", args.file,
         count, args.context, args.context);
  out.windows = plan_perplexity_windows(count, args.context);
  if (settings.add_bos_token) out.window_bos = settings.bos_token_id;
  out.vocab = config.vocab_size;
  return out;
}

void print_text_report(const PerplexityArgs& args, const PerplexityResult& r,
                       const KlBaseReader* base, const std::string& precision, double seconds) {
  const PerplexityWindows& w = r.windows;
  const Perplexity ppl = perplexity_of(r.nll);
  std::printf("%s: %lld windows of %lld tokens, %lld positions scored (%s, %.1f s)\n",
              args.file.c_str(), static_cast<long long>(w.windows),
              static_cast<long long>(w.context), static_cast<long long>(w.positions()),
              precision.c_str(), seconds);
  std::printf("PPL              %.4f +/- %.4f  (mean NLL %.5f nats)\n", ppl.value,
              ppl.standard_error, r.nll.mean());
  if (!base) {
    if (!args.base.empty())
      std::printf("base written to  %s (top-%u + rest)\n", args.base.c_str(), args.top_k);
    return;
  }
  const KlComparison& c = *r.comparison;
  std::printf("against          %s (top-%u + rest)\n", base->path().c_str(), base->header().top_k);
  std::printf("base PPL         %.4f\n", perplexity_of(c.base_nll()).value);
  std::printf("mean KLD         %.6g +/- %.2g\n", c.kl().mean(), c.kl().standard_error());
  std::printf("99th pct KLD     %.6g\n", c.kl_percentile(0.99));
  std::printf("max KLD          %.6g\n", c.kl_max());
  std::printf("top-1 agreement  %.4f%% +/- %.4f%%\n", 100 * c.top1().mean(),
              100 * c.top1().standard_error());
  std::printf("max |dlogprob|   %.6g\n", c.max_abs_dlogprob());
}

void print_json_report(const PerplexityArgs& args, const PerplexityResult& r,
                       const KlBaseReader* base, const ModelOptions& options, double seconds) {
  const Perplexity ppl = perplexity_of(r.nll);
  nlohmann::ordered_json j;
  j["perplexity"] = ppl.value;
  j["perplexity_stderr"] = ppl.standard_error;
  j["nll_mean"] = r.nll.mean();
  j["tokens_scored"] = r.windows.positions();
  j["windows"] = r.windows.windows;
  j["context"] = r.windows.context;
  j["file"] = args.file;
  j["activations"] = activation_precision_name(options.cpu.activations);
  j["kv_cache_dtype"] = kv_dtype_name(kv_cache_dtype(args.kv_cache_dtype));
  j["seconds"] = seconds;
  if (!base && !args.base.empty()) {
    j["base_written"] = args.base;
    j["top_k"] = args.top_k;
  }
  if (base) {
    const KlComparison& c = *r.comparison;
    j["base"] = base->path();
    j["top_k"] = base->header().top_k;
    j["base_perplexity"] = perplexity_of(c.base_nll()).value;
    j["kld_mean"] = c.kl().mean();
    j["kld_mean_stderr"] = c.kl().standard_error();
    j["kld_p99"] = c.kl_percentile(0.99);
    j["kld_max"] = c.kl_max();
    j["top1_agreement"] = c.top1().mean();
    j["top1_agreement_stderr"] = c.top1().standard_error();
    j["max_abs_dlogprob"] = c.max_abs_dlogprob();
  }
  std::printf("%s\n", j.dump(2).c_str());
}

void run_perplexity_cmd(const PerplexityArgs& args) {
  if (args.compare && args.base.empty())
    fail("--kl-divergence: give the base to compare with as --kl-divergence-base F");
  if (args.top_k == 0) fail("--kl-divergence-top-k: at least 1");
  const ScoredText text = read_scored_text(args);

  // Both base checks before the weights: the file to compare with must fit this text, and a base
  // to write must not replace one by accident (a forgotten --kl-divergence would).
  std::unique_ptr<KlBaseReader> base;
  if (args.compare) {
    base = std::make_unique<KlBaseReader>(args.base);
    base->check_matches(perplexity_base_header(text.windows, text.tokens, text.vocab, 0));
  } else if (!args.base.empty() && std::filesystem::exists(args.base) && !args.force) {
    fail(
        "--kl-divergence-base {}: exists; add --kl-divergence to compare with it, or --force to "
        "replace it",
        args.base);
  }

  ModelOptions options;
  options.cpu = cpu_kernel_config(args.activations, args.batch_invariant);
  options.threads = args.threads;
  options.parallel = args.parallel;
  options.show_load_progress = !args.quiet;
  options.memory_available_bytes = available_memory_per_rank();
  options.huge_page_weights = args.huge_page_weights;
  auto model = Model::load(args.model, options, ranks());
  if (follow_rank0(*model)) return;  // the scores are rank 0's

  std::unique_ptr<KlBaseWriter> writer;
  if (!args.compare && !args.base.empty())
    writer = std::make_unique<KlBaseWriter>(
        args.base,
        perplexity_base_header(text.windows, text.tokens, model->weights().vocab_size, args.top_k));
  PerplexityOptions run;
  run.context = args.context;
  run.kv_dtype = kv_cache_dtype(args.kv_cache_dtype);
  run.window_bos = text.window_bos;

  const PerplexityWindows& w = text.windows;
  std::unique_ptr<Progress> progress;
  if (!args.quiet) {
    progress = std::make_unique<Progress>("perplexity", w.windows * w.context, "tokens");
    progress->show_after(std::chrono::seconds(1));
  }
  const auto start = std::chrono::steady_clock::now();
  const PerplexityResult result =
      run_perplexity(*model, text.tokens, run, writer.get(), base.get(), [&](int64_t) {
        if (progress) progress->add(w.context);
      });
  const double seconds = seconds_since(start);
  if (progress) progress->finish();
  if (writer) writer->commit();

  if (args.json) {
    print_json_report(args, result, base.get(), options, seconds);
  } else {
    const std::string precision = fmt::format("activations {}, KV cache {}",
                                              activation_precision_name(options.cpu.activations),
                                              kv_dtype_name(run.kv_dtype));
    print_text_report(args, result, base.get(), precision, seconds);
  }
}

}  // namespace

void register_perplexity(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "perplexity", "Perplexity of a text, and KL divergence against a base run's logits");
  auto args = std::make_shared<PerplexityArgs>();
  add_model_flag(cmd, args->model, "Checkpoint directory");
  cmd->add_option("--file", args->file,
                  "Text scored as is (no chat template; special tokens written in it are parsed)")
      ->required();
  cmd->add_option("--context", args->context,
                  "Tokens per window; the second half of each window is scored (default 512)");
  cmd->add_option("--kl-divergence-base", args->base,
                  "Base file: written by this run, or read with --kl-divergence");
  cmd->add_flag("--kl-divergence", args->compare,
                "Compare with the base of --kl-divergence-base instead of writing it");
  cmd->add_option("--kl-divergence-top-k", args->top_k,
                  "Tokens per position a written base keeps (the rest is one bucket; default 32)");
  cmd->add_flag("--force", args->force, "Replace an existing base file");
  cmd->add_flag("--json", args->json, "Print the results as a JSON object");
  add_threads_flag(cmd, args->threads, "Worker threads");
  add_weight_pages_flag(cmd, args->huge_page_weights);
  add_parallel_flags(cmd, args->parallel);
  add_kv_cache_dtype_flag(cmd, args->kv_cache_dtype);
  add_activations_flag(cmd, args->activations);
  add_batch_invariant_flag(cmd, args->batch_invariant);
  cmd->add_flag("--quiet", args->quiet, "No load or scoring progress on stderr");
  cmd->callback([args] {
    check_model_path(args->model);
    run_perplexity_cmd(*args);
  });
}

}  // namespace minimax::cli
