// The list of subcommands, in the order `minimax --help` shows them.
#include "cli/commands.h"

namespace minimax::cli {

void register_all(CLI::App& app) { (void)app; }

}  // namespace minimax::cli
