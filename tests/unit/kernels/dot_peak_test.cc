// Tests of the register-only multiply-add loops that `bench` times for the compute peak
// (kernels/cpu/dot_peak.h): each supported instruction's loop does the work it claims (its sum is
// the closed form of iterations × chains × lanes multiply-adds), and the instruction chosen for
// batches matches the CPU and the engine's activation precision.
#include "kernels/cpu/dot_peak.h"

#include <gtest/gtest.h>

#include <cmath>

#include "formats/float_formats.h"
#include "kernels/cpu/linear.h"

namespace minimax {
namespace {

bool supported(DotInstruction d) {
  const CpuFeatures& f = cpu_features();
  switch (d) {
    case DotInstruction::kDpbf16Zmm:
      return f.avx512_bf16;
    case DotInstruction::kAmxBf16:
      return f.amx_bf16;
    case DotInstruction::kFmaZmm:
      return f.avx512;
    case DotInstruction::kFmaYmm:
      return f.avx2;
    case DotInstruction::kScalarFma:
      return true;
  }
  return false;
}

TEST(DotPeak, LoopsDoTheWorkTheyCount) {
  constexpr int64_t kIterations = 100;
  for (DotInstruction d : {DotInstruction::kScalarFma, DotInstruction::kFmaYmm,
                           DotInstruction::kFmaZmm, DotInstruction::kDpbf16Zmm}) {
    if (!supported(d)) continue;
    // Chain i starts at i and gains (products per lane per instruction) × x each instruction;
    // the loops return the sum over chains and lanes (the ymm loop: two lanes of eight).
    const int lanes = d == DotInstruction::kScalarFma ? 1 : d == DotInstruction::kFmaYmm ? 2 : 16;
    const double x = d == DotInstruction::kDpbf16Zmm ? bf16_to_f32(0x3A83) : double{1e-3f};
    const int products = d == DotInstruction::kDpbf16Zmm ? 2 : 1;
    const double chains_start = kDotChains * (kDotChains - 1) / 2.0;
    const double expected =
        lanes * (chains_start + kDotChains * static_cast<double>(kIterations) * products * x);
    const double got = run_dot_loop(d, kIterations);
    EXPECT_NEAR(got, expected, 1e-4 * expected) << dot_instruction_name(d);
    EXPECT_EQ(dot_instruction_flops(d), 2 * products * (d == DotInstruction::kFmaYmm ? 8 : lanes))
        << dot_instruction_name(d);
  }
}

// The AMX loop returns the sum of its first result tile: 256 elements, each gaining 32 products
// of 1.0 and x per instruction, kDotChains / 4 instructions per iteration.
TEST(DotPeak, AmxLoopDoesTheWorkItCounts) {
  if (!supported(DotInstruction::kAmxBf16)) GTEST_SKIP() << "no AMX-BF16 on this CPU or OS";
  constexpr int64_t kIterations = 100;
  const double x = bf16_to_f32(0x3A83);
  const double expected = 256.0 * kIterations * (kDotChains / 4) * 32 * x;
  EXPECT_NEAR(run_dot_loop(DotInstruction::kAmxBf16, kIterations), expected, 1e-4 * expected);
  EXPECT_EQ(dot_instruction_flops(DotInstruction::kAmxBf16), 2 * 16 * 16 * 32);
}

TEST(DotPeak, BatchInstructionFollowsTheKernels) {
  CpuKernelConfig config;
  config.isa = CpuIsa::kScalar;
  EXPECT_EQ(batch_dot_instruction(config), DotInstruction::kScalarFma);
  config.isa = CpuIsa::kAvx2;
  EXPECT_EQ(batch_dot_instruction(config), DotInstruction::kFmaYmm);
  config.isa = CpuIsa::kAvx512;
  for (const bool amx : {false, true})
    for (const auto p : {ActivationPrecision::kF32, ActivationPrecision::kBF16,
                         ActivationPrecision::kBF16Batches, ActivationPrecision::kBF16x2}) {
      config.amx = amx;
      config.activations = p;
      const bool dp = cpu_features().avx512_bf16 && p != ActivationPrecision::kF32;
      const DotInstruction batch =
          amx && cpu_features().amx_bf16 ? DotInstruction::kAmxBf16 : DotInstruction::kDpbf16Zmm;
      EXPECT_EQ(batch_dot_instruction(config), dp ? batch : DotInstruction::kFmaZmm)
          << activation_precision_name(p) << " amx " << amx;
    }
}

}  // namespace
}  // namespace minimax
