// The `minimax` command: one binary, one subcommand per user path (DESIGN.md). Each subcommand
// lives in its own file and registers itself here; errors become a message and exit status 1.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/log.h"
#include "base/thread_pool.h"
#include "cli/commands.h"
#include "parallel/mpi_world.h"

namespace {

// An error on one rank of an mpirun job leaves the others waiting in a collective: end them all.
int fail_with(const char* what) {
  if (const minimax::Communicator* world = minimax::world_communicator()) world->abort(what);
  std::fprintf(stderr, "error: %s\n", what);
  return 1;
}

// The process-wide settings the library leaves to its caller, from the environment:
// MINIMAX_LOG=debug|info|warn|error and MINIMAX_POOL_SPIN_US (microseconds a pool polls before it
// sleeps). The CPU backend's variables are read with its flags (cli/activations_flag.h).
void apply_environment() {
  if (const char* level = std::getenv("MINIMAX_LOG"); level != nullptr && *level != '\0') {
    const std::string_view v(level);
    if (v == "debug") {
      minimax::set_log_threshold(minimax::LogLevel::kDebug);
    } else if (v == "info") {
      minimax::set_log_threshold(minimax::LogLevel::kInfo);
    } else if (v == "warn") {
      minimax::set_log_threshold(minimax::LogLevel::kWarn);
    } else if (v == "error") {
      minimax::set_log_threshold(minimax::LogLevel::kError);
    } else {
      minimax::fail("MINIMAX_LOG: '{}' is not debug, info, warn or error", v);
    }
  }
  if (const char* spin = std::getenv("MINIMAX_POOL_SPIN_US"); spin != nullptr && *spin != '\0') {
    char* end = nullptr;
    const long long us = std::strtoll(spin, &end, 10);
    if (*end != '\0' || us < 0 || us > 1000000)
      minimax::fail("MINIMAX_POOL_SPIN_US: '{}' is not a number of microseconds from 0 to 1000000",
                    spin);
    minimax::ThreadPool::set_spin_microseconds(us);
  }
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
    apply_environment();
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    return fail_with(e.what());
  }
  return 0;
}
