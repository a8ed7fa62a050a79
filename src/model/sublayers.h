// The two halves of a decoder layer, written once for M2 and M3 (internal to src/model).
#pragma once

#include <cstdint>
#include <vector>

#include "checkpoint/model_config.h"
#include "kernels/backend.h"
#include "model/activation_quant.h"
#include "model/kv_cache.h"
#include "model/model_weights.h"
#include "parallel/communicator.h"
#include "parallel/parallel_mode.h"

namespace minimax {

// What the sublayers of one step share. Every pointer is backend memory; the sublayers take their
// buffers from `ws` inside a WorkspaceScope, so each layer reuses the same memory.
struct ForwardContext {
  const ModelConfig& config;  // this rank's share (parallel/parallel_mode.h local_model_config)
  const KernelOps& ops;
  Workspace& ws;
  ThreadPool* pool;
  const ActivationQuantPlan& act_quant;
  bool dense_attention;  // MSA layers attend densely
  bool bf16_experts;     // the dequant MoE path
  const int32_t* positions;
  int64_t T;
  const int32_t* page_table;  // the sequence's block table (attention only; null for the batch)
  const ParallelPlan& plan;
  const Communicator* comm;        // null in a single process
  const ModelConfig& full_config;  // the whole model's sizes (the cross-rank QK norm's widths)
};

// y[T, w.rows] = W·x, feeding W's kernel FP8-quantized activations when the plan asks for it and
// W is stored quantized.
void project(const ForwardContext& ctx, const WeightView& w, const float* x, int64_t T, float* y);

// Writes this step's rows [T, width] to their slots of one storage array of `cache` (K, V or the
// MSA index keys of a layer).
void store_kv_rows(const ForwardContext& ctx, const float* rows, int64_t width,
                   const KvCache& cache, void* storage);

// The MSA index branch of a sparse layer: writes the index keys to the cache and returns the block
// choice [T, num_index_heads, topk_blocks] in the caller's workspace scope, or null when the model
// attends densely (ModelOptions::dense_attention).
const int32_t* select_sparse_blocks(const ForwardContext& ctx, const AttentionWeights& a, int layer,
                                    const float* xn, KvCache& cache);

// out[T, hidden] = o_proj(attention(xn)); writes this call's K/V (and index keys) into `cache`.
void attention_sublayer(const ForwardContext& ctx, const LayerWeights& w, int layer, const float* xn,
                     KvCache& cache, float* out);

// out[T, hidden] = the dense FFN or the MoE (routed sum · routed_scale, plus the shared expert).
// Under tensor parallelism `out` is this rank's partial sum (the caller all-reduces); under DP_EP
// the routed experts run wherever they are held (moe_exchange).
void ffn_sublayer(const ForwardContext& ctx, const LayerWeights& w, const float* xn, float* out);

// DP_EP's routed experts: this rank's T tokens (`args.x`, routed by `args.expert_ids` and
// `args.expert_weights`) are sent to the ranks holding their experts, which run them and send the
// results back; args.y ← the sum. Every rank calls it for every MoE layer, with T = 0 when it has
// no tokens this step, since the others may still send it theirs.
void moe_exchange(const ForwardContext& ctx, const MoeArgs& args);
// A MoE layer on a DP_EP rank with no tokens this step: its part of the exchange.
void idle_moe_layer(const ForwardContext& ctx, const LayerWeights& w);

}  // namespace minimax
