// Each activation precision of the cpu backend (kernels/cpu/linear.h ActivationPrecision, the
// commands' --activations) on every golden of the float64 reference (both architectures, every
// layout, the long M3 prompts whose later positions choose MSA blocks), held to the tolerance it is
// stated to keep (docs/cpu_kernels.md "Activation precision"): |engine − golden| over the checked
// top-8 logits and the whole last row (logits O(1)–O(5)), and the last position's top-1 id the
// golden's. Measured maxima (printed by the test) over the 16 goldens:
//   f32           kF32Tolerance          2e-4 (golden_test.cc's bound); measured 1.3e-6
//   bf16x2        kBf16x2Tolerance       2e-4, f32's bound; measured 1.0e-5 (m2-fp8-block) to
//                                        3.4e-5 (m3-mxfp4-fp8attn)
//   bf16-batches  kBf16BatchesTolerance  0.15; measured 0.0044 (m2-mxfp8) to 0.021 (m3-bf16-long)
//                                        on the vdpbf16ps GEMM; on AMX (which also takes the
//                                        MX and FP4 formats) up to 0.121 (m3-bf16-long)
//   bf16          kBf16Tolerance         0.15; measured up to 0.023 (every call rounded); 0.121
//                                        on AMX (m3-bf16-long: the last row, while the top-8 of
//                                        every checked position stayed within 0.023; rounding
//                                        that is the same, summed in another order, flipped a
//                                        discrete choice)
// bf16x2 takes the split kernels on every call (NVFP4 keeps its f32 one). The prompts are 24 and
// 160 tokens, so bf16-batches takes the batch GEMM (8+ tokens) for the attention projections,
// lm_head and every expert given 8+ tokens; every layout has matrices the GEMM reads (lm_head,
// bf16, at least), so each one moves. As with the bf16 KV cache
// (kv_dtype_model_test.cc) the errors are not smooth in the rounding: on these random tiny models
// a perturbation can flip a discrete choice (router top-k, MSA blocks).
// Every other test of this binary runs with f32 activations: ModelOptions::cpu's default, which
// no environment variable changes (the library reads none).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/linear.h"
#include "model/model.h"
#include "tiny_fixture.h"

namespace minimax {
namespace {

using testing_support::golden_distance;
using testing_support::golden_forward;
using testing_support::golden_last_argmax;
using testing_support::golden_names;
using testing_support::last_argmax;
using testing_support::load_golden;

constexpr double kF32Tolerance = 2e-4;
constexpr double kBf16x2Tolerance = 2e-4;
constexpr double kBf16BatchesTolerance = 0.15;
constexpr double kBf16Tolerance = 0.15;
constexpr double kBf16x2BatchesTolerance = 2e-4;

double tolerance(ActivationPrecision p) {
  switch (p) {
    case ActivationPrecision::kF32:
      return kF32Tolerance;
    case ActivationPrecision::kBF16x2:
      return kBf16x2Tolerance;
    case ActivationPrecision::kBF16Batches:
      return kBf16BatchesTolerance;
    case ActivationPrecision::kBF16:
      return kBf16Tolerance;
    case ActivationPrecision::kBF16x2Batches:
      return kBf16x2BatchesTolerance;
  }
  ADD_FAILURE() << "no tolerance for " << activation_precision_name(p);
  return 0;
}

struct Distance {
  double max_error = 0;    // max |cpu engine − golden| over the checked logits and the last row
  bool same_top1 = false;  // the last position's top-1 id is the golden's
};

// The cpu engine on golden `g` at precision `p`.
Distance distance_at(const nlohmann::json& g, ActivationPrecision p) {
  const std::vector<float> logits = golden_forward(g, BackendKind::kCpu, KvDtype::kF32, p);
  return {golden_distance(logits, g), last_argmax(logits, g) == golden_last_argmax(g)};
}

// Whether the bf16-activation kernels run here (else bf16x2 and bf16-batches compute as f32).
bool bf16_kernels_run() {
  return cpu_features().avx512_bf16 && default_cpu_isa() == CpuIsa::kAvx512;
}

class ActivationPrecisionModelTest : public ::testing::TestWithParam<ActivationPrecision> {};

TEST_P(ActivationPrecisionModelTest, EveryGoldenWithinTheStatedTolerance) {
  const ActivationPrecision p = GetParam();
  double worst = 0;
  for (const std::string& name : golden_names()) {
    const Distance d = distance_at(load_golden(name), p);
    EXPECT_LE(d.max_error, tolerance(p)) << name;
    EXPECT_TRUE(d.same_top1) << name << ": last position's top-1";
    worst = std::max(worst, d.max_error);
    std::printf("[ measured ] %s, activations %s: max |cpu - golden| = %.3g\n", name.c_str(),
                activation_precision_name(p), d.max_error);
  }
  std::printf("[ measured ] activations %s: max over the goldens %.3g (tolerance %.3g)\n",
              activation_precision_name(p), worst, tolerance(p));
  // Not vacuous: the bf16 kernels ran and do round (f32 is within 2e-6 of these goldens).
  if (bf16_kernels_run() && p != ActivationPrecision::kF32) {
    const bool split =
        p == ActivationPrecision::kBF16x2 || p == ActivationPrecision::kBF16x2Batches;
    EXPECT_GT(worst, split ? 5e-6 : 1e-3);
  }
}

INSTANTIATE_TEST_SUITE_P(Precisions, ActivationPrecisionModelTest,
                         ::testing::Values(ActivationPrecision::kF32, ActivationPrecision::kBF16x2,
                                           ActivationPrecision::kBF16Batches,
                                           ActivationPrecision::kBF16,
                                           ActivationPrecision::kBF16x2Batches),
                         [](const auto& info) {
                           std::string name = activation_precision_name(info.param);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace minimax
