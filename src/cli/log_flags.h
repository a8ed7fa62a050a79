// --log-level and --log-format, on every command. The environment's MINIMAX_LOG (read in
// main.cc) sets the level first; a --log-level on the command line wins over it.
#pragma once

#include <CLI/CLI.hpp>

namespace minimax::cli {

// Adds both flags to `cmd`; each applies its value as the command line is parsed, before the
// command's callback runs, so that everything the command logs follows it.
void add_log_flags(CLI::App* cmd);

}  // namespace minimax::cli
