// The attention half of a decoder layer: q/k/v projections, QK norm (M2 across heads over the whole
// projection, M3 per head with (1 + w)), partial NeoX RoPE, the KV cache, the MSA index branch and
// block choice on sparse layers, causal GQA attention, o_proj.
#include <algorithm>
#include <cmath>
#include <vector>

#include "base/error.h"
#include "model/layer_blocks.h"

namespace minimax {
namespace {

// Writes rows [T, width] to their cache slots: slot positions[t] lives at the cache's storage row
// of that slot (the slot itself when contiguous, through the block table when paged).
void store_rows(const float* rows, int64_t T, int64_t width, const int32_t* positions,
                const KvCache& cache, float* storage) {
  for (int64_t t = 0; t < T; ++t)
    std::copy_n(rows + t * width, width, storage + cache.storage_row(positions[t]) * width);
}

// The MSA index branch: index queries and the one shared index key, normed per head with (1 + w)
// and rotated like q/k; the keys go to the index cache. Returns the block choice
// [T, num_index_heads, topk_blocks] unless the caller asked for dense attention.
// Returns null for dense attention, else s.blocks.data().
const int32_t* select_sparse_blocks(const ForwardContext& ctx, const AttentionWeights& a, int layer,
                                    const float* xn, KvCache& cache, AttentionScratch& scratch) {
  const ModelConfig& c = ctx.config;
  const SparseAttentionConfig& s = c.sparse;
  const int64_t T = ctx.T, d = s.index_dim;
  const float eps = static_cast<float>(c.rms_norm_eps);
  std::vector<float>& iq = scratch.index_q;
  std::vector<float>& ik = scratch.index_k;
  iq.resize(T * s.num_index_heads * d);
  ik.resize(T * d);
  project(ctx, a.index_q, xn, T, iq.data());
  project(ctx, a.index_k, xn, T, ik.data());
  ctx.ops.rms_norm(iq.data(), T * s.num_index_heads, d, a.index_q_norm.data(), eps,
                   c.use_gemma_norm, iq.data(), ctx.pool);
  ctx.ops.rms_norm(ik.data(), T, d, a.index_k_norm.data(), eps, c.use_gemma_norm, ik.data(),
                   ctx.pool);
  RopeParams rope{s.num_index_heads, s.index_dim, c.rotary_dim, c.rope_theta};
  ctx.ops.rope(iq.data(), T, ctx.positions, rope, ctx.pool);
  rope.num_heads = 1;
  ctx.ops.rope(ik.data(), T, ctx.positions, rope, ctx.pool);
  store_rows(ik.data(), T, d, ctx.positions, cache, cache.index_k(layer));
  if (ctx.dense_attention) return nullptr;

  std::vector<int32_t>& blocks = scratch.blocks;
  blocks.resize(T * s.num_index_heads * s.topk_blocks);
  BlockSelectArgs b;
  b.index_q = iq.data();
  b.T = T;
  b.num_index_heads = s.num_index_heads;
  b.index_dim = s.index_dim;
  b.index_k_cache = cache.index_k(layer);
  b.index_k_stride = d;
  b.positions = ctx.positions;
  b.block_size = s.block_size;
  b.topk_blocks = s.topk_blocks;
  b.init_blocks = s.init_blocks;
  b.local_blocks = s.local_blocks;
  b.page_table = cache.page_table();
  b.page_size = cache.page_size();
  b.block_ids = blocks.data();
  ctx.ops.select_blocks(b, ctx.pool);
  return blocks.data();
}

}  // namespace

void attention_block(const ForwardContext& ctx, const LayerWeights& w, int layer, const float* xn,
                     KvCache& cache, float* out) {
  const ModelConfig& c = ctx.config;
  const AttentionWeights& a = w.attn;
  const int64_t T = ctx.T, hd = c.head_dim;
  const int64_t q_width = c.num_heads * hd, kv_width = c.num_kv_heads * hd;
  const float eps = static_cast<float>(c.rms_norm_eps);
  AttentionScratch own;
  AttentionScratch& scratch = ctx.attention_scratch != nullptr ? *ctx.attention_scratch : own;
  std::vector<float>& q = scratch.q;
  std::vector<float>& k = scratch.k;
  std::vector<float>& v = scratch.v;
  q.resize(T * q_width);
  k.resize(T * kv_width);
  v.resize(T * kv_width);
  project(ctx, a.q, xn, T, q.data());
  project(ctx, a.k, xn, T, k.data());
  project(ctx, a.v, xn, T, v.data());
  if (c.use_qk_norm) {
    if (c.qk_norm == QkNormKind::kPerLayer) {
      // M2: one RMS over all heads of the token's projection (a weight per element).
      ctx.ops.rms_norm(q.data(), T, q_width, a.q_norm.data(), eps, c.use_gemma_norm, q.data(),
                       ctx.pool);
      ctx.ops.rms_norm(k.data(), T, kv_width, a.k_norm.data(), eps, c.use_gemma_norm, k.data(),
                       ctx.pool);
    } else {
      // M3: each head normalised alone, one [head_dim] weight shared by every head.
      ctx.ops.rms_norm(q.data(), T * c.num_heads, hd, a.q_norm.data(), eps, c.use_gemma_norm,
                       q.data(), ctx.pool);
      ctx.ops.rms_norm(k.data(), T * c.num_kv_heads, hd, a.k_norm.data(), eps, c.use_gemma_norm,
                       k.data(), ctx.pool);
    }
  }
  RopeParams rope{c.num_heads, c.head_dim, c.rotary_dim, c.rope_theta};
  ctx.ops.rope(q.data(), T, ctx.positions, rope, ctx.pool);
  rope.num_heads = c.num_kv_heads;
  ctx.ops.rope(k.data(), T, ctx.positions, rope, ctx.pool);
  store_rows(k.data(), T, kv_width, ctx.positions, cache, cache.k(layer));
  store_rows(v.data(), T, kv_width, ctx.positions, cache, cache.v(layer));

  const int32_t* blocks =
      w.sparse ? select_sparse_blocks(ctx, a, layer, xn, cache, scratch) : nullptr;

  std::vector<float>& attn = scratch.attn;
  attn.resize(T * q_width);
  AttentionArgs args;
  args.q = q.data();
  args.T = T;
  args.num_heads = c.num_heads;
  args.num_kv_heads = c.num_kv_heads;
  args.head_dim = c.head_dim;
  args.k_cache = cache.k(layer);
  args.v_cache = cache.v(layer);
  args.cache_stride = kv_width;
  args.positions = ctx.positions;
  args.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  args.page_table = cache.page_table();
  args.page_size = cache.page_size();
  if (blocks != nullptr) {
    args.block_ids = blocks;
    args.max_blocks = c.sparse.topk_blocks;
    args.block_size = c.sparse.block_size;
  }
  args.out = attn.data();
  ctx.ops.attention(args, ctx.pool);
  project(ctx, a.o, attn.data(), T, out);
}

}  // namespace minimax
