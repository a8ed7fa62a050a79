// The SIMD backend's kernel table (kernels/backend.h completes its null entries with the
// reference ops).
#pragma once

#include "kernels/cpu/cpu_config.h"
#include "kernels/ops.h"

namespace minimax {

// The CPU ops, each bound to `config` (its ISA level, AMX use and activation precision).
KernelOps cpu_kernel_ops(const CpuKernelConfig& config);

}  // namespace minimax
