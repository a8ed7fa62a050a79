// The `minimax` command: one binary, one subcommand per user path (DESIGN.md). Each subcommand
// lives in its own file and registers itself here; errors become a message and exit status 1.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "base/error.h"
#include "cli/commands.h"
#include "parallel/mpi_world.h"

namespace {

// An error on one rank of an mpirun job leaves the others waiting in a collective: end them all.
int fail_with(const char* what) {
  if (const minimax::Communicator* world = minimax::world_communicator()) world->abort(what);
  std::fprintf(stderr, "error: %s\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Under mpirun every rank starts MPI before anything else runs (parallel/mpi_world.h).
  minimax::MpiSession mpi(&argc, &argv);
  CLI::App app{"minimax.cpp: inference engine and toolkit for MiniMax-M2 and MiniMax-M3"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "minimax.cpp 0.1.0");
  minimax::cli::register_all(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    return fail_with(e.what());
  }
  return 0;
}
