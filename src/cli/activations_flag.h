// --activations, shared by every command that runs the model: the precision in which the CPU
// backend's linear layers (and the experts, which use them) take their activations
// (kernels/cpu/linear.h ActivationPrecision). The tolerance each value is held to against the
// float64 goldens is stated in docs/cpu_kernels.md "Activation precision" and asserted by
// tests/unit/model/activation_precision_model_test.cc.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "kernels/cpu/linear.h"

namespace minimax::cli {

// Adds --activations auto|f32|bf16x2|bf16x2-batches|bf16|bf16-batches into `value`, which stays
// empty when the flag is not given; any other value is refused by the parser with a message naming
// the flag.
void add_activations_flag(CLI::App* cmd, std::string& value);

// What `auto` stands for on this machine. The one place that decides it: bf16x2 where the kernels
// use AVX512_BF16 (the AVX-512 level on a CPU that has it): the split GEMM for prefill (1.2-1.3x
// f32) and split row kernels for decode (1.03-1.16x f32 at one thread, the same at two, where
// both read at the memory's pace; docs/runtime.md). bf16x2-batches where the CPU also has AMX
// (Intel): there vdpbf16ps measured 0.48x of vfmadd231ps's GFLOP/s (AMD Zen 4: 2x), so the f32
// row kernels decode 1.08-1.16x faster than the split ones, and the batches run on AMX tiles
// anyway. f32 elsewhere (bf16x2 would compute as f32 there, and naming it would misreport the
// run).
ActivationPrecision auto_activation_precision();

// The precision for a --activations value: the names of linear.h activation_precision_name, and
// auto → auto_activation_precision(). An empty value (flag not given) means the environment
// variable MINIMAX_CPU_ACTIVATIONS when `environment` (its value, or null) is set, in that
// variable's names (linear.h activation_precision_name), else auto. Error naming the flag or the
// variable for an unknown value.
ActivationPrecision activation_precision_for(const std::string& value, const char* environment);

// Sets the engine's precision for the rest of the process from the flag's value and the
// environment (activation_precision_for); every command that runs the model calls it before
// loading the model, on every rank.
void use_activations_flag(const std::string& value);

}  // namespace minimax::cli
