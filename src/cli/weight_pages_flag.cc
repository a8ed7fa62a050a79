#include "cli/weight_pages_flag.h"

#include "base/error.h"

namespace minimax::cli {

bool parse_weight_pages(const std::string& value) {
  if (value == "huge") return true;
  if (value == "mapped") return false;
  fail(
      "--weight-pages: '{}' is not a choice: huge (the weights in transparent huge pages) or "
      "mapped (in the checkpoint mapping's pages)",
      value);
}

CLI::Option* add_weight_pages_flag(CLI::App* cmd, bool& huge) {
  huge = true;
  return cmd->add_option_function<std::string>(
      "--weight-pages", [&huge](const std::string& value) { huge = parse_weight_pages(value); },
      "Where the weights read in at load live: huge (default: transparent huge pages, where the "
      "kernel offers them; fewer TLB misses when decode reads experts from all over the "
      "checkpoint) or mapped (the checkpoint mapping's pages, shared with other processes)");
}

}  // namespace minimax::cli
