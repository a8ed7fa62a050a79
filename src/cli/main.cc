// The `minimax` command: one binary, one subcommand per user path (DESIGN.md). Each subcommand
// lives in its own file and registers itself here; errors become a message and exit status 1.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "base/thread_pool.h"
#include "cli/commands.h"
#include "cli/help_format.h"
#include "cli/usage_errors.h"
#include "cli/version_info.h"
#include "parallel/mpi_world.h"

namespace {

// An error on one rank of an mpirun job leaves the others waiting in a collective: end them all.
int fail_with(const char* what) {
  if (const minimax::Communicator* world = minimax::world_communicator()) world->abort(what);
  std::fprintf(stderr, "error: %s\n", what);
  return 1;
}

// The process-wide settings the library leaves to its caller, from the environment:
// MINIMAX_LOG=debug|info|warning|error (a --log-level flag wins over it) and MINIMAX_POOL_SPIN_US
// (microseconds a pool polls before it sleeps). The CPU backend's variables are read with its flags
// (cli/activations_flag.h).
void apply_environment() {
  if (const char* level = std::getenv("MINIMAX_LOG"); level != nullptr && *level != '\0') {
    const std::optional<minimax::LogLevel> parsed = minimax::parse_log_level(level);
    if (!parsed) minimax::fail("MINIMAX_LOG: '{}' is not debug, info, warning or error", level);
    minimax::set_log_threshold(*parsed);
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

// Where to read the flags of the command named in `args`: "minimax serve --help".
std::string help_hint(const CLI::App& app, const std::vector<std::string>& args) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (!args.empty() && sub->get_name() == args.front())
      return "minimax " + sub->get_name() + " --help";
  return "minimax --help";
}

// A mistake in the command line, in the one `error:` style, with where to read the flags.
int fail_usage(const std::string& what, const std::string& help) {
  std::fprintf(stderr, "error: %s\n(the flags: %s)\n", what.c_str(), help.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  // Under mpirun every rank starts MPI before anything else runs (parallel/mpi_world.h).
  minimax::MpiSession mpi(&argc, &argv);
  CLI::App app{"minimax.cpp: inference engine and toolkit for MiniMax-M2 and MiniMax-M3",
               "minimax"};
  app.require_subcommand(1);
  app.set_version_flag("--version", minimax::cli::version_text, "Version, commit, build and CPU");
  minimax::cli::register_all(app);
  minimax::cli::format_help_of(app);
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {  // no command: the list of commands, as `git` does
    std::fputs(app.help().c_str(), stdout);
    return 1;
  }
  try {
    apply_environment();
    // Typos first: CLI11 would report a missing required flag or subcommand instead.
    if (auto unknown = minimax::cli::unknown_name_in(app, args))
      return fail_usage(*unknown, help_hint(app, args));
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    return fail_usage(e.what(), help_hint(app, args));
  } catch (const std::exception& e) {
    return fail_with(e.what());
  }
  return 0;
}
