// The attention half of a decoder layer: q/k/v projections, QK norm (M2 across heads over the whole
// projection, M3 per head with (1 + w)), partial NeoX RoPE, the KV cache, causal GQA attention over
// the MSA blocks chosen by msa_index_branch.cc on sparse layers, o_proj.
#include <cmath>

#include "base/error.h"
#include "model/sublayers.h"

namespace minimax {
namespace {

// M2's cross-head QK norm when this rank holds only some heads: each rank sums the squares of its
// part of every token's q and k, one all-reduce of the [2, T] sums makes them whole, then each
// normalises its part. A KV head held by several ranks (more ranks than KV heads) is counted
// once per holder, so k's mean divides by the width times the copies.
void split_qk_norm(const ForwardContext& ctx, const AttentionWeights& a, float* q, float* k) {
  const ModelConfig& c = ctx.config;
  const int64_t T = ctx.T, hd = c.head_dim;
  const int64_t q_width = c.num_heads * hd, kv_width = c.num_kv_heads * hd;
  const float eps = static_cast<float>(c.rms_norm_eps);
  float* sums = ctx.ws.take<float>(2 * T);
  ctx.ops.sum_squares(q, T, q_width, sums);
  ctx.ops.sum_squares(k, T, kv_width, sums + T);
  ctx.comm->allreduce_sum(sums, static_cast<size_t>(2 * T));
  const int64_t full_q = int64_t(ctx.full_config.num_heads) * hd;
  const int64_t full_k = int64_t(ctx.full_config.num_kv_heads) * hd * ctx.plan.kv_copies;
  ctx.ops.rms_norm_from_sums(q, T, q_width, sums, full_q, a.q_norm.data(), eps, c.use_gemma_norm,
                             q);
  ctx.ops.rms_norm_from_sums(k, T, kv_width, sums + T, full_k, a.k_norm.data(), eps,
                             c.use_gemma_norm, k);
}

}  // namespace

// Writes rows [T, width] of this step to their slots of one storage array of the cache.
void store_kv_rows(const ForwardContext& ctx, const float* rows, int64_t width,
                   const KvCache& cache, void* storage) {
  KvStoreArgs s;
  s.rows = rows;
  s.T = ctx.T;
  s.width = width;
  s.positions = ctx.positions;
  s.page_table = ctx.page_table;
  s.page_size = cache.page_size();
  s.storage = storage;
  s.dtype = cache.dtype();
  ctx.ops.store_kv(s);
}

void attention_sublayer(const ForwardContext& ctx, const LayerWeights& w, int layer, const float* xn,
                     KvCache& cache, float* out) {
  const ModelConfig& c = ctx.config;
  const AttentionWeights& a = w.attn;
  const int64_t T = ctx.T, hd = c.head_dim;
  const int64_t q_width = c.num_heads * hd, kv_width = c.num_kv_heads * hd;
  const float eps = static_cast<float>(c.rms_norm_eps);
  WorkspaceScope scope(ctx.ws);
  float* q = ctx.ws.take<float>(T * q_width);
  float* k = ctx.ws.take<float>(T * kv_width);
  float* v = ctx.ws.take<float>(T * kv_width);
  project(ctx, a.q, xn, T, q);
  project(ctx, a.k, xn, T, k);
  project(ctx, a.v, xn, T, v);
  if (c.use_qk_norm) {
    if (c.qk_norm == QkNormKind::kPerLayer && ctx.plan.tensor_parallel()) {
      split_qk_norm(ctx, a, q, k);
    } else if (c.qk_norm == QkNormKind::kPerLayer) {
      // M2: one RMS over all heads of the token's projection (a weight per element).
      ctx.ops.rms_norm(q, T, q_width, a.q_norm.data(), eps, c.use_gemma_norm, q, ctx.pool);
      ctx.ops.rms_norm(k, T, kv_width, a.k_norm.data(), eps, c.use_gemma_norm, k, ctx.pool);
    } else {
      // M3: each head normalised alone, one [head_dim] weight shared by every head.
      ctx.ops.rms_norm(q, T * c.num_heads, hd, a.q_norm.data(), eps, c.use_gemma_norm, q, ctx.pool);
      ctx.ops.rms_norm(k, T * c.num_kv_heads, hd, a.k_norm.data(), eps, c.use_gemma_norm, k,
                       ctx.pool);
    }
  }
  RopeParams rope{c.num_heads, c.head_dim, c.rotary_dim, c.rope_theta};
  ctx.ops.rope(q, T, ctx.positions, rope, ctx.pool);
  rope.num_heads = c.num_kv_heads;
  ctx.ops.rope(k, T, ctx.positions, rope, ctx.pool);
  store_kv_rows(ctx, k, kv_width, cache, cache.k(layer));
  store_kv_rows(ctx, v, kv_width, cache, cache.v(layer));

  const int32_t* blocks = w.sparse ? select_sparse_blocks(ctx, a, layer, xn, cache) : nullptr;

  float* attn = ctx.ws.take<float>(T * q_width);
  AttentionArgs args;
  args.q = q;
  args.T = T;
  args.num_heads = c.num_heads;
  args.num_kv_heads = c.num_kv_heads;
  args.head_dim = c.head_dim;
  args.k_cache = cache.k(layer);
  args.v_cache = cache.v(layer);
  args.cache_stride = kv_width;
  args.kv_dtype = cache.dtype();
  args.positions = ctx.positions;
  args.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  args.page_table = ctx.page_table;
  args.page_size = cache.page_size();
  if (blocks != nullptr) {
    args.block_ids = blocks;
    args.max_blocks = c.sparse.topk_blocks;
    args.block_size = c.sparse.block_size;
    // The choice is made for every KV group (the index branch is replicated); this rank's heads
    // read their groups' rows.
    args.block_groups = c.sparse.num_index_heads;
    args.block_group_begin = ctx.plan.tensor_parallel() ? ctx.plan.kv_head_begin : 0;
  }
  args.out = attn;
  ctx.ops.attention(args, ctx.pool);
  project(ctx, a.o, attn, T, out);
}

}  // namespace minimax
