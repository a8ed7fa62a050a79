// Registration of the `minimax` subcommands. Each register_* lives in cli/<name>.cc and adds one
// subcommand whose callback does the work (throwing minimax::Error on bad input).
#pragma once

#include <CLI/CLI.hpp>

namespace minimax::cli {

void register_all(CLI::App& app);

}  // namespace minimax::cli
