// Which dynamic activation quantization a checkpoint's runtime would apply, for the optional
// emulation (off by default): the inputs of quantized Linears, and the routed experts'
// down-projection input.
#pragma once

#include "checkpoint/model_config.h"
#include "checkpoint/quant_config.h"
#include "kernels/ops.h"

namespace minimax {

struct ActivationQuantPlan {
  ActQuant linear_input;    // every Linear stored in FP8 (incl. the routed experts' gate/up)
  ActQuant moe_down_input;  // the routed experts' down projection input, after the activation
};

// enabled = false: nothing is quantized. Otherwise:
//  - fp8-channel (compressed-tensors, dynamic per token): FP8 per token on every quantized
//    Linear's input. The down projection of SwiGLU-OAI experts takes the fused FP8 MoE's fixed
//    scale 56 / fp8_max (|input| ≤ 7·(7+1) = 56, so it never saturates); SiLU experts' down input
//    is unbounded and stays per token.
//  - fp8-block (official MiniMax FP8, "dynamic"): FP8 per token in groups of block_k (1×128) on
//    every quantized Linear's input, the down input included.
// fp8_max is 448 (OCP e4m3fn), or 240 for a Gaudi 2 flavoured checkpoint. Other layouts declare
// no FP8 activations to emulate: Error naming the scheme.
ActivationQuantPlan plan_activation_quant(const ModelConfig& config, const QuantConfig& quant,
                                          bool enabled);

}  // namespace minimax
