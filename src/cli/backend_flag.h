// --backend and --cpu-moe, shared by the commands that run a model: the names come from the one
// table of registered backends (kernels/backend.cc), so a build with the CUDA backend accepts
// `cuda` and one without it names what it has.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "kernels/backend.h"

namespace minimax::cli {

// Adds --backend NAME into `backend` (default as given), checked against the registered names,
// and --cpu-moe into `cpu_moe`.
void add_backend_flags(CLI::App* cmd, std::string& backend, bool& cpu_moe);

// The backend --backend names; Error when --cpu-moe comes with a host backend (whose experts
// already run on the CPU).
BackendKind resolve_backend(const std::string& backend, bool cpu_moe);

}  // namespace minimax::cli
