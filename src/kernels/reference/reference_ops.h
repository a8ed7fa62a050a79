// The reference backend: plain versions of every op in kernels/ops.h, computed in double and
// rounded once to f32 at the output. Obviously correct first, fast enough for tiny models and
// for checking the SIMD backend; the meaning of each op is the one documented in ops.h.
#pragma once

#include <functional>
#include <string_view>

#include "kernels/ops.h"

namespace minimax::reference {

void add(float* y, const float* x, int64_t n, ThreadPool* pool);
void copy(float* y, const float* x, int64_t n);
void gather_rows(const float* x, int64_t width, const int32_t* rows, int64_t count, float* out);
void store_kv(const KvStoreArgs& args);
void linear(const WeightView& w, const float* x, int64_t T, float* y, ThreadPool* pool);
void embedding(const WeightView& table, const int32_t* tokens, int64_t T, float* out);
void rms_norm(const float* x, int64_t rows, int64_t dim, const float* weight, float eps,
              bool add_one, float* out, ThreadPool* pool);
void sum_squares(const float* x, int64_t rows, int64_t dim, float* out);
void rms_norm_from_sums(const float* x, int64_t rows, int64_t dim, const float* sum_sq,
                        int64_t full_dim, const float* weight, float eps, bool add_one, float* out);
void rope(float* x, int64_t T, const int32_t* positions, const RopeParams& params,
          ThreadPool* pool);
void attention(const AttentionArgs& args, ThreadPool* pool);
void select_blocks(const BlockSelectArgs& args, ThreadPool* pool);
void route(const RouterArgs& args);
void glu(const float* gate, const float* up, int64_t n, const GluParams& params, float* out);
void quantize_activations(float* x, int64_t rows, int64_t cols, const ActQuant& q);
void moe(const MoeArgs& args, ThreadPool* pool);

// The argument checks every backend makes before running the op (Error naming the op), so that
// the backends refuse the same calls with the same messages.
void check_attention_args(const AttentionArgs& a);
void check_block_select_args(const BlockSelectArgs& a);
void check_router_args(const RouterArgs& a);
// Token t's router outputs from the chosen experts (chosen[j], j < top_k, in choice order) and
// the sigmoid score of every expert (score[e]): the unbiased scores, renormalised when asked,
// times routed_scale.
void write_routing(const RouterArgs& a, int64_t t, const int* chosen, const double* score);

// The cache row of slot s: itself, or through the page table of a paged cache.
inline int64_t cache_row(const int32_t* page_table, int page_size, int64_t s) {
  if (page_table == nullptr) return s;
  return int64_t(page_table[s / page_size]) * page_size + s % page_size;
}

// The f32 rotary angle of ops.h RopeFn: f32(position · f32 inv_freq[pair]).
float rope_angle(int32_t position, int pair, int rotary_dim, double theta);

// Calls fn(begin, end) over a split of [0, n): on `pool` when given, else inline.
void for_range(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace minimax::reference
