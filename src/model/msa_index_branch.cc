// M3's MSA index branch and block selection on sparse layers: index queries (4 heads) and the one
// shared index key, normed per head with (1 + w) and rotated like q/k; the index keys go to their
// own paged cache, and the select_blocks op chooses, per query and KV group, the blocks attention
// will read (kernels/reference/msa_block_select.cc defines the choice).
#include "model/sublayers.h"

namespace minimax {

// The MSA index branch: index queries and the one shared index key, normed per head with (1 + w)
// and rotated like q/k; the keys go to the index cache. Returns the block choice
// [T, num_index_heads, topk_blocks] (in the caller's workspace scope), or null when the model
// attends densely.
const int32_t* select_sparse_blocks(const ForwardContext& ctx, const AttentionWeights& a, int layer,
                                    const float* xn, KvCache& cache) {
  const ModelConfig& c = ctx.config;
  const SparseAttentionConfig& s = c.sparse;
  const int64_t T = ctx.T, d = s.index_dim;
  const float eps = static_cast<float>(c.rms_norm_eps);
  float* iq = ctx.ws.take<float>(T * s.num_index_heads * d);
  float* ik = ctx.ws.take<float>(T * d);
  project(ctx, a.index_q, xn, T, iq);
  project(ctx, a.index_k, xn, T, ik);
  ctx.ops.rms_norm(iq, T * s.num_index_heads, d, a.index_q_norm.data(), eps, c.use_gemma_norm, iq,
                   ctx.pool);
  ctx.ops.rms_norm(ik, T, d, a.index_k_norm.data(), eps, c.use_gemma_norm, ik, ctx.pool);
  RopeParams rope{s.num_index_heads, s.index_dim, c.rotary_dim, c.rope_theta};
  ctx.ops.rope(iq, T, ctx.positions, rope, ctx.pool);
  rope.num_heads = 1;
  ctx.ops.rope(ik, T, ctx.positions, rope, ctx.pool);
  store_kv_rows(ctx, ik, d, cache, cache.index_k(layer));
  if (ctx.dense_attention) return nullptr;

  int32_t* blocks = ctx.ws.take<int32_t>(T * s.num_index_heads * s.topk_blocks);
  BlockSelectArgs b;
  b.index_q = iq;
  b.T = T;
  b.num_index_heads = s.num_index_heads;
  b.index_dim = s.index_dim;
  b.index_k_cache = cache.index_k(layer);
  b.index_k_stride = d;
  b.kv_dtype = cache.dtype();
  b.positions = ctx.positions;
  b.block_size = s.block_size;
  b.topk_blocks = s.topk_blocks;
  b.init_blocks = s.init_blocks;
  b.local_blocks = s.local_blocks;
  b.page_table = ctx.page_table;
  b.page_size = cache.page_size();
  b.block_ids = blocks;
  ctx.ops.select_blocks(b, ctx.pool);
  return blocks;
}

}  // namespace minimax
