// --activations, shared by every command that runs the model: the precision in which the CPU
// backend's linear layers (and the experts, which use them) take their activations
// (kernels/cpu/linear.h ActivationPrecision). The tolerance each value is held to against the
// float64 goldens is stated in docs/cpu_kernels.md "Activation precision" and asserted by
// tests/unit/model/activation_precision_model_test.cc.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "kernels/cpu/cpu_config.h"

namespace minimax::cli {

// Adds --activations auto|f32|bf16x2|bf16x2-batches|bf16|bf16-batches into `value`, which stays
// empty when the flag is not given; any other value is refused by the parser with a message naming
// the flag.
void add_activations_flag(CLI::App* cmd, std::string& value);

// Adds --batch-invariant into `value` (false unless given): a position's logits are the same bits
// in every call that computes it (decode, a k-token verify, any prefill chunk, beside any other
// sequences, at any thread count; kernels/cpu/linear.h CpuLinearOptions::batch_invariant). Costs
// prefill speed at the bf16 precisions (docs/cpu_kernels.md "Batch invariance"). Refused with the
// *-batches precisions.
void add_batch_invariant_flag(CLI::App* cmd, bool& value);

// What `auto` stands for on this machine. The one place that decides it: bf16x2 where the kernels
// use AVX512_BF16 (the AVX-512 level on a CPU that has it): the split GEMM for prefill (1.2-1.3x
// f32) and split row kernels for decode (1.03-1.16x f32 at one thread, the same at two, where
// both read at the memory's pace; docs/runtime.md). bf16x2-batches where the CPU also has AMX
// (Intel): there vdpbf16ps measured 0.48x of vfmadd231ps's GFLOP/s (AMD Zen 4: 2x), so the f32
// row kernels decode 1.08-1.16x faster than the split ones, and the batches run on AMX tiles
// anyway. f32 elsewhere (bf16x2 would compute as f32 there, and naming it would misreport the
// run).
ActivationPrecision auto_activation_precision(CpuIsa isa = default_cpu_isa());

// The precision for a --activations value: the names of linear.h activation_precision_name, and
// auto → auto_activation_precision(). An empty value (flag not given) means the environment
// variable MINIMAX_CPU_ACTIVATIONS when `environment` (its value, or null) is set, in that
// variable's names (linear.h activation_precision_name), else auto. Error naming the flag or the
// variable for an unknown value.
ActivationPrecision activation_precision_for(const std::string& value, const char* environment);

// The environment variables that override the CPU backend's configuration, as set (null: not).
// The library reads none of them; the commands read them here.
struct CpuEnvironment {
  const char* activations = nullptr;  // MINIMAX_CPU_ACTIVATIONS: a --activations name
  const char* isa = nullptr;          // MINIMAX_CPU_ISA=scalar|avx2|avx512: caps the ISA level
  const char* amx = nullptr;          // MINIMAX_CPU_AMX=0|1: 0 keeps batches off the AMX tiles
  // MINIMAX_CPU_BATCH_INVARIANT=0|1: 1 asks for batch invariance as --batch-invariant does.
  const char* batch_invariant = nullptr;
};
CpuEnvironment cpu_environment();

// The CPU backend's configuration (ModelOptions::cpu) for a command: the ISA level from
// MINIMAX_CPU_ISA or the best the CPU has (Error naming the variable for an unknown level or one
// the CPU lacks), AMX unless MINIMAX_CPU_AMX is 0 (Error for values other than 0 and 1), and the
// activations from the flag's value (activation_precision_for, with `auto` for that ISA level),
// batch invariance when --batch-invariant (`batch_invariant`) or MINIMAX_CPU_BATCH_INVARIANT=1
// asks for it (Error for values other than 0 and 1, and with a *-batches precision, naming the
// flag or the variable). Every command that runs the model calls it, on every rank.
// `invariance_flag` names what asked for invariance in that error (--speculative-config turns
// it on too).
CpuKernelConfig cpu_kernel_config(const std::string& activations_flag, bool batch_invariant = false,
                                  const CpuEnvironment& environment = cpu_environment(),
                                  const char* invariance_flag = "--batch-invariant");

}  // namespace minimax::cli
