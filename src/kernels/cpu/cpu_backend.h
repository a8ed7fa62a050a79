// The SIMD backend's kernel table (kernels/backend.h completes its null entries with the
// reference ops).
#pragma once

#include "kernels/ops.h"

namespace minimax {

KernelOps cpu_kernel_ops();

}  // namespace minimax
