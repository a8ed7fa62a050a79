// `minimax validate --source SRC --converted DST [--sample N] [--threads N]`: the independent check
// of a converted checkpoint; prints a report and exits with status 1 on any failure.
#include <cstdio>

#include "checkpoint/validate.h"
#include "cli/commands.h"
#include "cli/threads_flag.h"

namespace minimax::cli {

void register_validate(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "validate", "Check a converted FP8 checkpoint against its MXFP4 source, independently");
  auto source = std::make_shared<std::string>();
  auto converted = std::make_shared<std::string>();
  auto sample = std::make_shared<int>(0);
  auto threads = std::make_shared<size_t>(0);
  auto quiet = std::make_shared<bool>(false);
  cmd->add_option("--source", *source, "The Quark MXFP4 checkpoint directory")->required();
  cmd->add_option("--converted", *converted, "The checkpoint `minimax convert` wrote")->required();
  cmd->add_option("--sample", *sample,
                  "Routed experts compared element by element per layer (default: all); the "
                  "scales of every expert are checked regardless")
      ->check(CLI::NonNegativeNumber);
  add_threads_flag(cmd, *threads, "Worker threads");
  cmd->add_flag("--quiet", *quiet, "No progress bar");
  cmd->callback([=] {
    const ValidateReport report =
        validate_conversion({*source, *converted, *sample, *threads, !*quiet});
    std::fputs(format_validate_report(report).c_str(), stdout);
    if (!report.ok()) throw CLI::RuntimeError(1);
  });
}

}  // namespace minimax::cli
