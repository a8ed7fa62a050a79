// The ops the CPU backend implements. The FP8 activation emulation (quantize_activations) and the
// plain copies (copy, gather_rows, store_kv) stay the reference's, which are already memcpy-speed.
#include "kernels/cpu/cpu_backend.h"

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/linear.h"

namespace minimax {

KernelOps cpu_kernel_ops(const CpuKernelConfig& config) {
  if (config.batch_invariant) check_batch_invariant(config.activations);
  const CpuLinearOptions linear = config.linear();
  const CpuIsa isa = config.isa;
  const bool amx_attention = config.amx_attention();
  KernelOps ops;
  ops.name = "cpu";
  ops.add = cpu_add;
  ops.linear = [linear](const WeightView& w, const float* x, int64_t T, float* y,
                        ThreadPool* pool) { cpu_linear_op(w, x, T, y, pool, linear); };
  ops.embedding = cpu_embedding;
  ops.rms_norm = [isa](const float* x, int64_t rows, int64_t dim, const float* weight, float eps,
                       bool add_one, float* out, ThreadPool* pool) {
    cpu_rms_norm_at(x, rows, dim, weight, eps, add_one, out, pool, isa);
  };
  ops.rope = cpu_rope;
  ops.attention = [isa, amx_attention](const AttentionArgs& args, ThreadPool* pool) {
    cpu_attention_at(args, pool, isa, amx_attention);
  };
  ops.select_blocks = [isa](const BlockSelectArgs& args, ThreadPool* pool) {
    cpu_select_blocks_at(args, pool, isa);
  };
  ops.route = cpu_route;
  ops.glu = [isa](const float* gate, const float* up, int64_t n, const GluParams& params,
                  float* out) { cpu_glu_at(gate, up, n, params, out, isa); };
  ops.moe = [linear](const MoeArgs& args, ThreadPool* pool) { cpu_moe(args, pool, linear); };
  return ops;
}

}  // namespace minimax
