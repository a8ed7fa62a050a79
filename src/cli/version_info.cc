#include "cli/version_info.h"

#include <fmt/format.h>

#include "cli/activations_flag.h"
#include "kernels/cpu/cpu_features.h"
#include "parallel/mpi_world.h"

// Set for this file alone by CMakeLists.txt, so that a new commit recompiles only it.
#ifndef MINIMAX_GIT_COMMIT
#define MINIMAX_GIT_COMMIT "unknown"
#endif
#ifndef MINIMAX_BUILD_TYPE
#define MINIMAX_BUILD_TYPE "unknown"
#endif

namespace minimax::cli {

std::string version_text() {
  // What the commands would run with: MINIMAX_CPU_ISA / MINIMAX_CPU_AMX applied.
  const CpuKernelConfig cpu = cpu_kernel_config("");
  return fmt::format(
      "minimax.cpp 0.1.0\n"
      "commit: {}\n"
      "build type: {}\n"
      "cpu isa: {} (best on this cpu: {})\n"
      "amx: {}\n"
      "mpi: {}",
      MINIMAX_GIT_COMMIT, MINIMAX_BUILD_TYPE, cpu_isa_name(cpu.isa),
      cpu_isa_name(default_cpu_isa()),
      !cpu.amx          ? "no"
      : amx_emulation() ? "emulated (MINIMAX_CPU_AMX=emulate)"
                        : "yes",
      mpi_available() ? "yes" : "no");
}

}  // namespace minimax::cli
