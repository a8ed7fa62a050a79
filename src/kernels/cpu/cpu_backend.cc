// The ops the CPU backend implements: every op of kernels/ops.h except the FP8 activation
// emulation (quantize_activations), which stays the reference's.
#include "kernels/cpu/cpu_backend.h"

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/linear.h"

namespace minimax {

KernelOps cpu_kernel_ops() {
  KernelOps ops;
  ops.name = "cpu";
  ops.linear = cpu_linear_op;
  ops.embedding = cpu_embedding;
  ops.rms_norm = cpu_rms_norm;
  ops.rope = cpu_rope;
  ops.attention = cpu_attention;
  ops.select_blocks = cpu_select_blocks;
  ops.route = cpu_route;
  ops.glu = cpu_glu;
  ops.moe = cpu_moe;
  return ops;
}

}  // namespace minimax
