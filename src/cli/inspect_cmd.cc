// `minimax inspect DIR [--json]`: describe a checkpoint; exit status 1 when tensors are missing,
// unexpected or mis-shaped.
#include <cstdio>

#include "checkpoint/inspect.h"
#include "cli/commands.h"

namespace minimax::cli {

void register_inspect(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("inspect", "Describe a checkpoint directory and check its tensors");
  auto dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto all = std::make_shared<bool>(false);
  cmd->add_option("dir", *dir, "Checkpoint directory")->required();
  cmd->add_flag("--json", *json, "Print the report as JSON");
  cmd->add_flag("--all", *all, "List every missing/unexpected tensor, not the first 20");
  cmd->callback([=] {
    InspectReport report = inspect_checkpoint(*dir);
    if (*json) {
      nlohmann::ordered_json j = report.summary;
      j["missing"] = report.missing;
      j["unexpected"] = report.unexpected;
      j["mismatched"] = report.mismatched;
      j["skipped"] = report.skipped;
      j["ok"] = report.ok();
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::fputs(format_inspect_report(report, *all ? 0 : 20).c_str(), stdout);
    }
    if (!report.ok()) throw CLI::RuntimeError(1);
  });
}

}  // namespace minimax::cli
