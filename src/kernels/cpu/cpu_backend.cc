// The ops the CPU backend implements so far: linear.
#include "kernels/cpu/cpu_backend.h"

#include "kernels/cpu/linear.h"

namespace minimax {

KernelOps cpu_kernel_ops() {
  KernelOps ops;
  ops.name = "cpu";
  ops.linear = cpu_linear_op;
  return ops;
}

}  // namespace minimax
