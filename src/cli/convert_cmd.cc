// `minimax convert --input SRC --output DST [--target ocp|gaudi2] [--threads N] [--resume]
// [--force]`: the exact MXFP4 -> FP8 re-encoding of a Quark checkpoint (docs/convert.md).
#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include "checkpoint/convert.h"
#include "cli/commands.h"
#include "cli/threads_flag.h"

namespace minimax::cli {

void register_convert(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "convert", "Re-encode a Quark MXFP4 checkpoint's routed experts to FP8, exactly");
  auto input = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto target = std::make_shared<std::string>("ocp");
  auto threads = std::make_shared<size_t>(0);
  auto resume = std::make_shared<bool>(false);
  auto force = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  auto stop_after = std::make_shared<size_t>(0);
  cmd->add_option("--input", *input, "Quark MXFP4 checkpoint directory")->required();
  cmd->add_option("--output", *output, "Output directory (written as OUTPUT.partial, then renamed)")
      ->required();
  cmd->add_option("--target", *target,
                  "ocp: OCP e4m3 (max 448), also exact where Gaudi 2 halves FP8 weights; "
                  "gaudi2: values within Gaudi 2's 240, config marks the flavour")
      ->check(CLI::IsMember({"ocp", "gaudi2"}));
  add_threads_flag(cmd, *threads, "Worker threads");
  cmd->add_flag("--resume", *resume,
                "Continue an interrupted run from OUTPUT.partial: keeps only the shards its resume "
                "manifest records (re-verified), removes anything else");
  cmd->add_flag("--force", *force, "Replace an existing output directory");
  cmd->add_flag("--quiet", *quiet, "No progress bar");
  // Testing aid, hidden from --help: after N finished shards the process kills itself (SIGKILL,
  // exit status 137 in a shell) without any cleanup, as a crash or an OOM kill would.
  cmd->add_option("--stop-after-shards", *stop_after, "Testing aid: die after N shards")->group("");
  cmd->callback([=] {
    ConvertOptions options;
    options.input_dir = *input;
    options.output_dir = *output;
    options.target = parse_fp8_target(*target);
    options.threads = *threads;
    options.resume = *resume;
    options.force = *force;
    options.show_progress = !*quiet;
    if (*stop_after > 0) {
      const size_t limit = *stop_after;
      options.after_shard = [limit](size_t done) {
        if (done < limit) return;
        std::fprintf(stderr, "convert: --stop-after-shards %zu reached, killing the process\n",
                     limit);
        std::fflush(nullptr);
        ::kill(::getpid(), SIGKILL);
      };
    }
    const ConvertSummary summary = convert_checkpoint(options);
    std::fputs(format_convert_summary(summary).c_str(), stdout);
    std::printf("wrote %s\n", output->c_str());
  });
}

}  // namespace minimax::cli
