// Activation quantization rules per checkpoint layout.
#include "model/activation_quant.h"

#include "base/error.h"

namespace minimax {

ActivationQuantPlan plan_activation_quant(const ModelConfig& config, const QuantConfig& quant,
                                          bool enabled) {
  ActivationQuantPlan plan;
  if (!enabled) return plan;
  const float fp8_max = quant.fp8_flavor == "float8_e4m3fnuz" ? 240.0f : 448.0f;
  plan.linear_input.fp8_max = plan.moe_down_input.fp8_max = fp8_max;
  switch (quant.scheme) {
    case QuantScheme::kFp8Channel:
      plan.linear_input.kind = ActQuantKind::kFp8PerToken;
      if (config.activation == Activation::kSwigluOai) {
        plan.moe_down_input.kind = ActQuantKind::kFp8FixedScale;
        const double bound = config.swiglu_limit * (config.swiglu_limit + config.swiglu_beta);
        plan.moe_down_input.fixed_scale = static_cast<float>(bound / fp8_max);
      } else {
        plan.moe_down_input.kind = ActQuantKind::kFp8PerToken;
      }
      return plan;
    case QuantScheme::kFp8Block:
      plan.linear_input.kind = plan.moe_down_input.kind = ActQuantKind::kFp8Group;
      plan.linear_input.group = plan.moe_down_input.group = quant.block_k;
      return plan;
    case QuantScheme::kNone:
    case QuantScheme::kMxfp4:
    case QuantScheme::kNvfp4:
    case QuantScheme::kMxfp8:         // MXFP8 activations: not emulated
    case QuantScheme::kMxfp4Fp8Attn:  // FP8 attention inputs, MXFP4 elsewhere: not emulated
      break;
  }
  fail(
      "activation quantization emulation: the {} layout declares no FP8 activations to emulate "
      "(only fp8-block and fp8-channel do)",
      quant_scheme_name(quant.scheme));
}

}  // namespace minimax
