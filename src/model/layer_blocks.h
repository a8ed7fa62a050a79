// The two halves of a decoder layer, written once for M2 and M3 (internal to src/model).
#pragma once

#include <cstdint>
#include <vector>

#include "checkpoint/model_config.h"
#include "kernels/ops.h"
#include "model/activation_quant.h"
#include "model/kv_cache.h"
#include "model/model_weights.h"

namespace minimax {

// Buffers of attention_block, kept by the forward pass across layers and sequences so the layer
// loop does not allocate (resized to each call's need; capacity only grows).
struct AttentionScratch {
  std::vector<float> q, k, v, attn, index_q, index_k;
  std::vector<int32_t> blocks;
};

struct ForwardContext {
  const ModelConfig& config;
  const KernelOps& ops;
  ThreadPool* pool;
  const ActivationQuantPlan& act_quant;
  bool dense_attention;  // MSA layers attend densely
  bool bf16_experts;     // the dequant MoE path
  const int32_t* positions;
  int64_t T;
  AttentionScratch* attention_scratch = nullptr;  // null: attention_block allocates its own
};

// y[T, w.rows] = W·x, feeding W's kernel FP8-quantized activations when the plan asks for it and
// W is stored quantized.
void project(const ForwardContext& ctx, const WeightView& w, const float* x, int64_t T, float* y);

// out[T, hidden] = o_proj(attention(xn)); writes this call's K/V (and index keys) into `cache`.
void attention_block(const ForwardContext& ctx, const LayerWeights& w, int layer, const float* xn,
                     KvCache& cache, float* out);

// out[T, hidden] = the dense FFN or the MoE (routed sum · routed_scale, plus the shared expert).
void ffn_block(const ForwardContext& ctx, const LayerWeights& w, const float* xn, float* out);

}  // namespace minimax
