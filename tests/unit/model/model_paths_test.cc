// The alternative execution paths: the dequant MoE path (experts decoded to bf16 at load, bf16
// activations) and the emulated dynamic FP8 activation quantization, on the golden checkpoints.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "model/model.h"
#include "tiny_fixture.h"

namespace minimax {
namespace {

using testing_support::golden_checkpoint;
using testing_support::iota_positions;
using testing_support::load_golden;

struct RunResult {
  std::vector<float> logits;
  int64_t vocab = 0;
};

RunResult run(const nlohmann::json& g, const ModelOptions& options,
              std::unique_ptr<Model>* keep = nullptr) {
  auto model = Model::load(golden_checkpoint(g), options);
  const auto tokens = g.at("tokens").get<std::vector<int32_t>>();
  KvCache cache = model->new_cache(static_cast<int64_t>(tokens.size()), KvDtype::kF32);
  RunResult r{model->forward(tokens, iota_positions(tokens.size()), cache, LogitsFor::kAllTokens),
              g.at("vocab_size").get<int64_t>()};
  if (keep) *keep = std::move(model);
  return r;
}

// Largest difference between the last row and the golden's.
double last_row_diff(const RunResult& r, const nlohmann::json& g) {
  const float* last = r.logits.data() + r.logits.size() - r.vocab;
  double worst = 0;
  for (int64_t i = 0; i < r.vocab; ++i)
    worst = std::max(worst, std::fabs(last[i] - g["last_logits"][i].get<double>()));
  return worst;
}

class DequantPath : public ::testing::TestWithParam<std::string> {};

// The experts' weights and activations are rounded to bf16 (2^-9 relative each): measured up to
// 0.074 on these O(1)-O(5) logits (M2 block FP8, where a perturbed layer changes a later expert
// choice). Bound 0.15, and the top-1 id must not change at any checked position.
TEST_P(DequantPath, StaysCloseToTheGoldenWithBf16Experts) {
  const nlohmann::json g = load_golden(GetParam());
  ModelOptions options;
  options.moe_path = MoePath::kDequant;
  std::unique_ptr<Model> model;
  const RunResult r = run(g, options, &model);
  for (const LayerWeights& layer : model->weights().layers) {
    if (!layer.moe) continue;
    for (const ExpertWeights& e : layer.moe_weights.experts) {
      EXPECT_EQ(e.gate.format, WeightFormat::kBF16);
      EXPECT_EQ(e.down.format, WeightFormat::kBF16);
    }
  }
  const double diff = last_row_diff(r, g);
  EXPECT_GT(diff, 0.0);   // it is a different computation...
  EXPECT_LT(diff, 0.15);  // ...of the same model
  for (const auto& check : g.at("checked")) {
    const float* row = r.logits.data() + check.at("position").get<int64_t>() * r.vocab;
    EXPECT_EQ(std::max_element(row, row + r.vocab) - row, check.at("top_ids")[0].get<int64_t>());
  }
}

INSTANTIATE_TEST_SUITE_P(QuantizedLayouts, DequantPath,
                         ::testing::Values("m2-fp8-block", "m2-fp8-channel", "m2-mxfp4", "m2-nvfp4",
                                           "m3-fp8-block", "m3-fp8-channel", "m3-mxfp4",
                                           "m3-nvfp4"),
                         [](const auto& info) {
                           std::string s = info.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

class ActivationQuantEmulation : public ::testing::TestWithParam<std::string> {};

// FP8 activations (3 mantissa bits) perturb the logits: measured 0.06-0.17. The test checks the
// emulation is applied (a change) and stays a perturbation (< 0.4).
TEST_P(ActivationQuantEmulation, PerturbsTheLogitsOfFp8Checkpoints) {
  const nlohmann::json g = load_golden(GetParam());
  ModelOptions options;
  options.emulate_activation_quant = true;
  const double diff = last_row_diff(run(g, options), g);
  EXPECT_GT(diff, 1e-3);
  EXPECT_LT(diff, 0.4);
}

INSTANTIATE_TEST_SUITE_P(Fp8Layouts, ActivationQuantEmulation,
                         ::testing::Values("m2-fp8-block", "m2-fp8-channel", "m3-fp8-block",
                                           "m3-fp8-channel"),
                         [](const auto& info) {
                           std::string s = info.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

TEST(ActivationQuantEmulation, RefusedWhereTheLayoutHasNoFp8Activations) {
  for (const char* name : {"m3-bf16", "m2-mxfp4", "m3-nvfp4"}) {
    ModelOptions options;
    options.emulate_activation_quant = true;
    try {
      Model::load(golden_checkpoint(load_golden(name)), options);
      ADD_FAILURE() << name << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("no FP8 activations"), std::string::npos) << e.what();
    }
  }
}

TEST(ActivationQuantPlan, RulesPerLayout) {
  const ModelConfig m3 = load_model_config(golden_checkpoint(load_golden("m3-fp8-channel")));
  const QuantConfig channel = load_quant_config(golden_checkpoint(load_golden("m3-fp8-channel")));
  ActivationQuantPlan plan = plan_activation_quant(m3, channel, true);
  EXPECT_EQ(plan.linear_input.kind, ActQuantKind::kFp8PerToken);
  // SwiGLU-OAI bounds the down input by 7·(7+1) = 56: the fused kernel's fixed 56/448.
  EXPECT_EQ(plan.moe_down_input.kind, ActQuantKind::kFp8FixedScale);
  EXPECT_FLOAT_EQ(plan.moe_down_input.fixed_scale, 56.0f / 448.0f);
  const ModelConfig m2 = load_model_config(golden_checkpoint(load_golden("m2-fp8-channel")));
  plan = plan_activation_quant(m2, channel, true);
  EXPECT_EQ(plan.moe_down_input.kind, ActQuantKind::kFp8PerToken);  // SiLU: unbounded
  const QuantConfig block = load_quant_config(golden_checkpoint(load_golden("m2-fp8-block")));
  plan = plan_activation_quant(m2, block, true);
  EXPECT_EQ(plan.linear_input.kind, ActQuantKind::kFp8Group);
  EXPECT_EQ(plan.linear_input.group, 128);
  EXPECT_EQ(plan.moe_down_input.kind, ActQuantKind::kFp8Group);
  plan = plan_activation_quant(m2, block, false);
  EXPECT_EQ(plan.linear_input.kind, ActQuantKind::kNone);
  EXPECT_EQ(plan.moe_down_input.kind, ActQuantKind::kNone);
}

}  // namespace
}  // namespace minimax
