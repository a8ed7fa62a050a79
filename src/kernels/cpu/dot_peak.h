// The multiply-add instruction the CPU linear kernels spend a prefill batch of bf16 weights on, and
// a loop of it that runs in registers only (no memory traffic): runtime/compute_peak.h times the
// loop on every thread to give the compute peak that `minimax bench` compares prefill with.
#pragma once

#include <cstdint>
#include <string_view>

#include "kernels/cpu/cpu_config.h"

namespace minimax {

enum class DotInstruction : uint8_t {
  kScalarFma,  // kScalar level: one f32 multiply-add
  kFmaYmm,     // kAvx2: vfmadd231ps on 8 f32 lanes
  kFmaZmm,     // kAvx512 with f32 activations: vfmadd231ps on 16 lanes
  kDpbf16Zmm,  // kAvx512 + AVX512_BF16 with bf16 batch activations: vdpbf16ps, 32 bf16 pairs
  kAmxBf16,    // the same with AMX (CpuKernelConfig::amx): tdpbf16ps, a 16 × 16 × 32 tile product
};

// What a batch of at least kBatchTokens tokens on bf16 weights runs under `config` (its ISA level,
// AMX use and activation precision).
DotInstruction batch_dot_instruction(const CpuKernelConfig& config);

std::string_view dot_instruction_name(DotInstruction d);  // e.g. "vdpbf16ps zmm"
// Floating-point operations per instruction (a multiply-add counts 2).
int dot_instruction_flops(DotInstruction d);

// Independent accumulator chains in the loop (enough to hide the latency on current cores).
inline constexpr int kDotChains = 24;

// Runs `iterations` × kDotChains instructions of `d` on the calling thread and returns a sum of
// the accumulators (so that nothing is optimised away). The CPU must support `d`.
double run_dot_loop(DotInstruction d, int64_t iterations);

}  // namespace minimax
