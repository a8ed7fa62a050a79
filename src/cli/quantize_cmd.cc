// `minimax quantize --input DIR --output DIR --format FORMAT [--keep ROLE,...] [--resume]`: any
// published layout in, any quantized row of quant_config.cc's scheme table out (fp8-block,
// fp8-channel, mxfp8, mxfp4, mxfp4-fp8attn, nvfp4), shard by shard (docs/quantize.md).
#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include "checkpoint/quantize.h"
#include "checkpoint/quantize_plan.h"
#include "cli/commands.h"
#include "cli/threads_flag.h"

namespace minimax::cli {

void register_quantize(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "quantize", "Re-encode a checkpoint in any published layout in another (4-bit experts, ...)");
  auto opts = std::make_shared<QuantizeOptions>();
  auto format = std::make_shared<std::string>();
  auto keep = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  auto stop_after = std::make_shared<size_t>(0);
  cmd->add_option("--input", opts->input_dir,
                  "Checkpoint directory: bf16, fp8-block, fp8-channel, mxfp8, mxfp4 or "
                  "mxfp4-fp8attn")
      ->required();
  cmd->add_option("--output", opts->output_dir,
                  "Output directory (written as OUTPUT.partial, then renamed)")
      ->required();
  cmd->add_option("--format", *format,
                  "fp8-block, fp8-channel, mxfp4, mxfp4-fp8attn (MXFP4 experts, FP8 attention), "
                  "nvfp4 or mxfp8")
      ->required();
  cmd->add_option("--keep", *keep,
                  "Comma-separated roles whose Linears stay as they are in the input (" +
                      keep_role_names() + ")");
  cmd->add_flag("--resume", opts->resume,
                "Continue an interrupted run from OUTPUT.partial: keeps only the shards its resume "
                "manifest records, removes anything else");
  add_threads_flag(cmd, opts->threads, "Linears encoded at once");
  cmd->add_flag("--force", opts->force, "Replace an existing output directory");
  cmd->add_flag("--quiet", *quiet, "No progress bar");
  // Testing aid, hidden from --help: after N finished shards the process kills itself (SIGKILL)
  // without any cleanup, as a crash or an OOM kill would.
  cmd->add_option("--stop-after-shards", *stop_after, "Testing aid: die after N shards")->group("");
  cmd->callback([=] {
    opts->scheme = parse_quant_scheme(*format);
    opts->keep = parse_keep_roles(*keep);
    opts->show_progress = !*quiet;
    if (*stop_after > 0) {
      const size_t limit = *stop_after;
      opts->after_shard = [limit](size_t done) {
        if (done < limit) return;
        std::fprintf(stderr, "quantize: --stop-after-shards %zu reached, killing the process\n",
                     limit);
        std::fflush(nullptr);
        ::kill(::getpid(), SIGKILL);
      };
    }
    const QuantizeSummary summary = quantize_checkpoint(*opts);
    std::fputs(format_quantize_summary(summary, *opts).c_str(), stdout);
    std::printf("wrote %s\n", opts->output_dir.c_str());
  });
}

}  // namespace minimax::cli
