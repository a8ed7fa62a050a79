// What the CPU backend is configured with: the instruction-set level its kernels use, whether the
// batch GEMM and prefill attention may use AMX tiles, and the precision of the activations in the
// matrix products. A field of the backend's options (kernels/backend.h BackendOptions), set by the
// commands from their flags (and the MINIMAX_CPU_* environment variables, read in src/cli/ only);
// the kernels read nothing process-wide but the AMX emulation switch (cpu_features.h), a check.
#pragma once

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/linear.h"

namespace minimax {

struct CpuKernelConfig {
  CpuIsa isa = default_cpu_isa();  // the best level the CPU supports
  bool amx = amx_usable();         // use AMX where the CPU has it (or it is emulated)
  ActivationPrecision activations = ActivationPrecision::kF32;
  // A token's results do not depend on the call it is in (CpuLinearOptions::batch_invariant: the
  // linear layers and experts stay on the row kernels; prefill attention stays off AMX tiles).
  bool batch_invariant = false;

  CpuLinearOptions linear() const {
    CpuLinearOptions options;
    options.isa = isa;
    options.amx = amx;
    options.activations = activations;
    options.batch_invariant = batch_invariant;
    return options;
  }
  // Prefill attention on AMX tiles rounds Q and K to split bf16: only when the activations are not
  // asked to stay f32.
  // Not under batch_invariant: the tile kernel takes calls of 16+ queries only, and sums in
  // another order than the kernels the smaller calls take.
  bool amx_attention() const {
    return amx && activations != ActivationPrecision::kF32 && !batch_invariant;
  }
};

}  // namespace minimax
