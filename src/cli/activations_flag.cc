#include "cli/activations_flag.h"

#include <cstdlib>

#include "base/error.h"
#include "kernels/cpu/cpu_features.h"

namespace minimax::cli {
namespace {

// The precision when the flag is absent, so that scripts can ask for one without changing the
// command line.
constexpr const char* kEnvironment = "MINIMAX_CPU_ACTIVATIONS";

}  // namespace

void add_activations_flag(CLI::App* cmd, std::string& value) {
  value.clear();
  cmd->add_option(
         "--activations", value,
         "Precision of the activations in the CPU backend's matrix products: auto "
         "(bf16x2 on CPUs with AVX512_BF16, else f32: the fastest within the quality budget of "
         "docs/perplexity.md); f32 "
         "(exact products, f32 sums: "
         "logits within 2e-4 of the float64 reference on the tiny models); bf16x2 (each "
         "activation as two bf16 halves, within 2^-16 of f32: held to the same 2e-4); "
         "bf16x2-batches (bf16x2 for calls of 8+ tokens, f32 for decode); bf16 (every activation "
         "rounded "
         "to bf16, 2^-8 relative: the fastest decode and prefill, logits up to ~0.1 off on the "
         "tiny models); bf16-batches (bf16 for calls of 8+ tokens only, f32 for decode). On "
         "AMX CPUs any value but f32 also lets prefill attention use split bf16 tiles. "
         "Default: MINIMAX_CPU_ACTIVATIONS if set, else auto")
      ->check(CLI::IsMember({"auto", "f32", "bf16x2", "bf16x2-batches", "bf16", "bf16-batches"}));
}

void add_batch_invariant_flag(CLI::App* cmd, bool& value) {
  value = false;
  cmd->add_flag("--batch-invariant", value,
                "A position's logits are the same bits however it is computed: one token at a "
                "time, in a k-token verify, in any prefill chunk, after a prefix-cache hit, beside "
                "other sequences, at any thread count. Keeps batches off the bf16 GEMM and the "
                "AMX tiles (slower prefill at the bf16 precisions); refused with the *-batches "
                "precisions. Default: MINIMAX_CPU_BATCH_INVARIANT=1 if set, else off");
}

// The default is the fastest precision whose cost on the bundled model's evaluation text, against
// f32 activations with the same weights, stays within the quality budget (mean KL divergence
// 5e-4, p99 5e-3, top-1 agreement 99%; docs/perplexity.md "The default precision" has the
// measurements): bf16x2 where the kernels have bf16 products (its cost is ~1e-8; bf16's, ~5e-3,
// is ten times the budget), f32 elsewhere. One precision for every call size, never a *-batches
// mode, so that a position's logits need not depend on the size of the call that computes it.
ActivationPrecision auto_activation_precision(CpuIsa isa) {
  if (!cpu_features().avx512_bf16 || isa != CpuIsa::kAvx512) return ActivationPrecision::kF32;
  return ActivationPrecision::kBF16x2;
}

namespace {

ActivationPrecision precision_for(const std::string& value, const char* environment, CpuIsa isa) {
  if (value.empty()) {
    if (environment == nullptr || *environment == '\0') return auto_activation_precision(isa);
    if (const auto p = parse_activation_precision(environment)) return *p;
    fail(
        "{}: '{}' is not f32, bf16x2, bf16x2-batches, bf16 or bf16-batches (or pass --activations)",
        kEnvironment, environment);
  }
  if (value == "auto") return auto_activation_precision(isa);
  // The same names as the environment variable (kernels/cpu/linear.h).
  if (const auto p = parse_activation_precision(value)) return *p;
  fail(
      "--activations: unknown value '{}' (expected auto, f32, bf16x2, bf16x2-batches, bf16 or "
      "bf16-batches)",
      value);
}

}  // namespace

ActivationPrecision activation_precision_for(const std::string& value, const char* environment) {
  return precision_for(value, environment, default_cpu_isa());
}

CpuEnvironment cpu_environment() {
  return {std::getenv(kEnvironment), std::getenv("MINIMAX_CPU_ISA"), std::getenv("MINIMAX_CPU_AMX"),
          std::getenv("MINIMAX_CPU_BATCH_INVARIANT")};
}

CpuKernelConfig cpu_kernel_config(const std::string& activations_flag, bool batch_invariant,
                                  const CpuEnvironment& environment, const char* invariance_flag) {
  CpuKernelConfig config;
  if (environment.isa != nullptr && *environment.isa != '\0') {
    config.isa = parse_cpu_isa(environment.isa, "MINIMAX_CPU_ISA");
    if (!cpu_supports(config.isa))
      fail("MINIMAX_CPU_ISA: this CPU does not support '{}' (best available: {})", environment.isa,
           cpu_isa_name(default_cpu_isa()));
  }
  const std::string_view amx = environment.amx == nullptr ? "" : environment.amx;
  if (!amx.empty() && amx != "0" && amx != "1" && amx != "emulate")
    fail("MINIMAX_CPU_AMX: '{}' is not 0, 1 or emulate", amx);
  if (amx == "emulate") {
    // The AMX kernels on the tile emulator (a check of them on CPUs without AMX; slow).
    if (!cpu_features().avx512_bf16)
      fail(
          "MINIMAX_CPU_AMX=emulate: the emulated AMX kernels need AVX512_BF16, which this CPU "
          "lacks");
    set_amx_emulation(true);
  }
  config.amx = amx_usable() && amx != "0";
  config.activations = precision_for(activations_flag, environment.activations, config.isa);
  const std::string_view invariant =
      environment.batch_invariant == nullptr ? "" : environment.batch_invariant;
  if (!invariant.empty() && invariant != "0" && invariant != "1")
    fail("MINIMAX_CPU_BATCH_INVARIANT: '{}' is not 0 or 1", invariant);
  config.batch_invariant = batch_invariant || invariant == "1";
  if (config.batch_invariant && varies_with_call_size(config.activations))
    fail(
        "{}: activations {} change precision with the number of tokens in a call and cannot be "
        "batch-invariant; use f32, bf16x2 or bf16",
        batch_invariant ? invariance_flag : "MINIMAX_CPU_BATCH_INVARIANT",
        activation_precision_name(config.activations));
  return config;
}

}  // namespace minimax::cli
