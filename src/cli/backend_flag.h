// --backend, shared by the commands that run a model: the names come from the one table of
// registered backends (kernels/backend.cc), so a build with the CUDA backend accepts `cuda` and
// one without it names what it has.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace minimax::cli {

// Adds --backend NAME into `backend` (default as given), checked against the registered names.
CLI::Option* add_backend_flag(CLI::App* cmd, std::string& backend);

}  // namespace minimax::cli
