#include "cli/log_flags.h"

#include "base/error.h"
#include "base/log.h"

namespace minimax::cli {

void add_log_flags(CLI::App* cmd) {
  cmd->add_option_function<std::string>(
         "--log-level",
         [](const std::string& value) {
           const std::optional<LogLevel> level = parse_log_level(value);
           if (!level) fail("--log-level: '{}' is not debug, info, warning or error", value);
           set_log_threshold(*level);
         },
         "Least severe log lines shown: debug, info, warning or error (default info, or env "
         "MINIMAX_LOG)")
      ->group("Logging");
  cmd->add_option_function<std::string>(
         "--log-format",
         [](const std::string& value) {
           const std::optional<LogFormat> format = parse_log_format(value);
           if (!format) fail("--log-format: '{}' is not text or json", value);
           set_log_format(*format);
         },
         "text (default), or json: one object per line with ts, level, msg and a request's "
         "fields")
      ->group("Logging");
}

}  // namespace minimax::cli
