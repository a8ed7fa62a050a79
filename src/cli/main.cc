// The `minimax` command: one binary, one subcommand per user path (DESIGN.md). Each subcommand
// lives in its own file and registers itself here; errors become a message and exit status 1.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "base/error.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"minimax.cpp: inference engine and toolkit for MiniMax-M2 and MiniMax-M3"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "minimax.cpp 0.1.0");
  minimax::cli::register_all(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const minimax::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
