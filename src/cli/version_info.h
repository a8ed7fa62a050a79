// `minimax --version`: what a bug report needs to say which build ran where.
#pragma once

#include <string>

namespace minimax::cli {

// The version, the commit (from git when the build was configured, else "unknown"), the build
// type, the CPU instruction-set level the kernels use here (and the best this CPU has), whether
// AMX tiles are used, and whether this build has MPI. Several lines (CLI11 adds the last newline).
std::string version_text();

}  // namespace minimax::cli
