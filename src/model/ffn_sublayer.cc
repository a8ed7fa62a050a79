// The feed-forward half of a decoder layer: M3's dense FFN, or the sigmoid-routed MoE (bias for the
// choice only, renormalised, × routed_scaling_factor) plus M3's shared expert.
#include "model/sublayers.h"

namespace minimax {
namespace {

GluParams glu_params(const ModelConfig& c) {
  GluParams p;
  if (c.activation == Activation::kSwigluOai) {
    p.kind = GluKind::kSwigluOai;
    p.alpha = static_cast<float>(c.swiglu_alpha);
    p.limit = static_cast<float>(c.swiglu_limit);
    p.beta = static_cast<float>(c.swiglu_beta);
  }
  return p;
}

// down(act(gate·x, up·x)) over the T tokens.
void gated_ffn(const ForwardContext& ctx, const FfnWeights& f, const float* xn, float* out) {
  const int64_t T = ctx.T, width = f.gate.rows;
  WorkspaceScope scope(ctx.ws);
  float* gate = ctx.ws.take<float>(T * width);
  float* up = ctx.ws.take<float>(T * width);
  project(ctx, f.gate, xn, T, gate);
  project(ctx, f.up, xn, T, up);
  ctx.ops.glu(gate, up, T * width, glu_params(ctx.config), gate);
  project(ctx, f.down, gate, T, out);
}

// Everything of a MoE call but its tokens.
MoeArgs moe_args(const ForwardContext& ctx, const MoeWeights& m, bool quantized) {
  const ModelConfig& c = ctx.config;
  MoeArgs args;
  args.experts = m.experts.data();
  args.num_experts = c.num_experts;
  args.hidden = c.hidden_size;
  args.inter = c.intermediate_size;
  args.top_k = c.experts_per_tok;
  args.act = glu_params(c);
  if (quantized) args.down_input_quant = ctx.act_quant.moe_down_input;
  args.bf16_activations = ctx.bf16_experts;
  if (ctx.plan.expert_parallel()) {  // only the experts this rank holds
    args.expert_begin = ctx.plan.expert_begin;
    args.expert_end = ctx.plan.expert_end;
  }
  return args;
}

}  // namespace

void idle_moe_layer(const ForwardContext& ctx, const LayerWeights& w) {
  const MoeWeights& m = w.moe_weights;
  const ExpertWeights& held = m.experts[ctx.plan.expert_begin];
  moe_exchange(ctx, moe_args(ctx, m, is_quantized_format(held.gate.format)));
}

void project(const ForwardContext& ctx, const WeightView& w, const float* x, int64_t T, float* y) {
  const ActQuant& q = ctx.act_quant.linear_input;
  if (q.kind == ActQuantKind::kNone || !is_quantized_format(w.format)) {
    ctx.ops.linear(w, x, T, y, ctx.pool);
    return;
  }
  WorkspaceScope scope(ctx.ws);
  float* xq = ctx.ws.take<float>(T * w.cols);
  ctx.ops.copy(xq, x, T * w.cols);
  ctx.ops.quantize_activations(xq, T, w.cols, q);
  ctx.ops.linear(w, xq, T, y, ctx.pool);
}

void ffn_sublayer(const ForwardContext& ctx, const LayerWeights& w, const float* xn, float* out) {
  if (!w.moe) {
    gated_ffn(ctx, w.dense, xn, out);
    return;
  }
  const ModelConfig& c = ctx.config;
  const MoeWeights& m = w.moe_weights;
  const int64_t T = ctx.T, H = c.hidden_size;
  const int k = c.experts_per_tok;
  WorkspaceScope scope(ctx.ws);
  float* logits = ctx.ws.take<float>(T * c.num_experts);
  float* weights = ctx.ws.take<float>(T * k);
  int32_t* ids = ctx.ws.take<int32_t>(T * k);
  ctx.ops.linear(m.router, xn, T, logits, ctx.pool);  // f32 router, never quantized
  RouterArgs r;
  r.logits = logits;
  r.T = T;
  r.num_experts = c.num_experts;
  r.top_k = k;
  r.selection_bias = m.bias.empty() ? nullptr : m.bias.data();
  r.renormalize = true;
  r.routed_scale = static_cast<float>(c.routed_scaling_factor);
  r.expert_ids = ids;
  r.expert_weights = weights;
  ctx.ops.route(r);

  // The routed experts' input, FP8-quantized once for all of them when emulating.
  const float* x_in = xn;
  // Judged by an expert this rank holds (under expert parallelism the others are empty).
  const bool quantized = is_quantized_format(m.experts[ctx.plan.expert_begin].gate.format);
  if (quantized && ctx.act_quant.linear_input.kind != ActQuantKind::kNone) {
    float* xq = ctx.ws.take<float>(T * H);
    ctx.ops.copy(xq, xn, T * H);
    ctx.ops.quantize_activations(xq, T, H, ctx.act_quant.linear_input);
    x_in = xq;
  }
  MoeArgs args = moe_args(ctx, m, quantized);
  args.x = x_in;
  args.T = T;
  args.expert_ids = ids;
  args.expert_weights = weights;
  args.y = out;
  if (ctx.plan.data_parallel())
    moe_exchange(ctx, args);
  else
    ctx.ops.moe(args, ctx.pool);

  if (m.has_shared) {  // a plain sum: no gate, no scaling
    float* shared = ctx.ws.take<float>(T * H);
    gated_ffn(ctx, m.shared, xn, shared);
    ctx.ops.add(out, shared, T * H, ctx.pool);
  }
}

}  // namespace minimax
