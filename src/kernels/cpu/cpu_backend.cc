// The ops the CPU backend implements. The FP8 activation emulation (quantize_activations) and the
// plain copies (copy, gather_rows, store_kv) stay the reference's, which are already memcpy-speed.
#include "kernels/cpu/cpu_backend.h"

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/linear.h"

namespace minimax {

KernelOps cpu_kernel_ops() {
  KernelOps ops;
  ops.name = "cpu";
  ops.add = cpu_add;
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
