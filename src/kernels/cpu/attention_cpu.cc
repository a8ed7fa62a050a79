// CPU attention and MSA block choice: argument checks, the visible slot runs of each (token, KV
// group), the split of the work across the pool, and the per-ISA kernels of
// attention_kernels-inl.h.
#include <algorithm>
#include <limits>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/attention_kernels.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace cpu_ops_detail {

const AttentionKernels& attention_kernels(CpuIsa isa) {
  if (!cpu_supports(isa))
    fail("cpu attention: this CPU does not support the '{}' kernels", cpu_isa_name(isa));
  switch (isa) {
    case CpuIsa::kAvx512:
      return attention_kernels_avx512();
    case CpuIsa::kAvx2:
      return attention_kernels_avx2();
    case CpuIsa::kScalar:
      break;
  }
  return attention_kernels_portable();
}

}  // namespace cpu_ops_detail

namespace {

using cpu_ops_detail::AttendJob;
using cpu_ops_detail::AttentionKernels;
using cpu_ops_detail::BlockScoreJob;
using cpu_ops_detail::SlotRange;

// Runs body(item) for item < items on `parts` threads of the pool, thread p taking items p,
// p + parts, ...: causal items grow with the token index, so striding balances prefill.
template <class Body>
void run_strided(ThreadPool* pool, int64_t items, const Body& body) {
  const int64_t threads = pool == nullptr ? 1 : static_cast<int64_t>(pool->size());
  const int64_t parts = std::min(threads, items);
  if (parts <= 1) {
    for (int64_t i = 0; i < items; ++i) body(i);
    return;
  }
  struct Context {
    const Body* body;
    int64_t items, parts;
  } ctx{&body, items, parts};
  const Context* c = &ctx;
  pool->parallel_for(static_cast<size_t>(parts), [c](size_t begin, size_t end, size_t) {
    for (size_t p = begin; p < end; ++p)
      for (int64_t i = static_cast<int64_t>(p); i < c->items; i += c->parts) (*c->body)(i);
  });
}

// The visible slots of query t for KV group g as runs of consecutive slots, ascending: [0, pos]
// when dense; else each selected block clipped to [0, pos], a block that starts where the previous
// run ends joining it (so selecting every visible block gives exactly the dense run).
void visible_runs(const AttentionArgs& a, int64_t t, int g, std::vector<SlotRange>& runs) {
  runs.clear();
  const int64_t pos = a.positions[t];
  if (a.block_ids == nullptr) {
    if (pos >= 0) runs.push_back({0, pos + 1});
    return;
  }
  const int32_t* blocks = a.block_ids + (t * a.num_kv_heads + g) * a.max_blocks;
  for (int i = 0; i < a.max_blocks && blocks[i] >= 0; ++i) {
    const int64_t first = int64_t(blocks[i]) * a.block_size;
    const int64_t end = std::min<int64_t>(first + a.block_size, pos + 1);
    if (first >= end) continue;
    if (!runs.empty() && runs.back().end == first) {
      runs.back().end = end;
    } else {
      runs.push_back({first, end});
    }
  }
}

}  // namespace

void cpu_attention_at(const AttentionArgs& a, ThreadPool* pool, CpuIsa isa) {
  if (a.num_kv_heads <= 0 || a.num_heads % a.num_kv_heads != 0)
    fail("attention: {} query heads are not a multiple of {} KV heads", a.num_heads,
         a.num_kv_heads);
  if (a.block_ids != nullptr && (a.block_size <= 0 || a.max_blocks <= 0))
    fail("attention: block selection needs block_size and max_blocks > 0");
  if (a.head_dim <= 0) fail("attention: head_dim {} must be positive", a.head_dim);
  if (a.page_table != nullptr && a.page_size <= 0)
    fail("attention: page_size {} must be positive with a page table", a.page_size);
  if (a.T <= 0) return;
  const AttentionKernels& kernels = cpu_ops_detail::attention_kernels(isa);
  const int group = a.num_heads / a.num_kv_heads;
  const int64_t d = a.head_dim;
  // Decode has one item per KV group; when that is fewer than the threads, a group's query heads
  // are split (each part reads the group's K/V rows, from cache after the first).
  const int64_t threads = pool == nullptr ? 1 : static_cast<int64_t>(pool->size());
  const float* k_cache = reference::f32_kv(a.k_cache, a.kv_dtype, "attention");
  const float* v_cache = reference::f32_kv(a.v_cache, a.kv_dtype, "attention");
  const int64_t groups = a.T * a.num_kv_heads;
  const int head_parts =
      static_cast<int>(std::clamp<int64_t>((threads + groups - 1) / groups, 1, group));
  run_strided(pool, groups * head_parts, [&](int64_t item) {
    thread_local std::vector<SlotRange> runs;
    thread_local std::vector<float> scratch;
    const int64_t t = item / (int64_t{a.num_kv_heads} * head_parts);
    const int g = static_cast<int>(item / head_parts % a.num_kv_heads);
    const int part = static_cast<int>(item % head_parts);
    const int h0 = g * group + group * part / head_parts;
    const int h1 = g * group + group * (part + 1) / head_parts;
    float* out = a.out + (t * a.num_heads + h0) * d;
    visible_runs(a, t, g, runs);
    if (runs.empty()) {  // cannot happen causally; defined as the reference defines it
      std::fill(out, out + (h1 - h0) * d, 0.0f);
      return;
    }
    AttendJob job;
    job.q = a.q + (t * a.num_heads + h0) * d;
    job.out = out;
    job.heads = h1 - h0;
    job.head_dim = d;
    job.k = k_cache + g * d;
    job.v = v_cache + g * d;
    job.cache_stride = a.cache_stride;
    job.page_table = a.page_table;
    job.page_size = a.page_size;
    job.ranges = runs.data();
    job.num_ranges = static_cast<int>(runs.size());
    job.scale = a.scale;
    const auto need = static_cast<size_t>(cpu_ops_detail::attend_scratch_floats(job.heads, d));
    if (scratch.size() < need) scratch.resize(need);
    kernels.attend(job, scratch.data());
  });
}

void cpu_attention(const AttentionArgs& args, ThreadPool* pool) {
  cpu_attention_at(args, pool, default_cpu_isa());
}

void cpu_select_blocks_at(const BlockSelectArgs& a, ThreadPool* pool, CpuIsa isa) {
  if (a.block_size <= 0 || a.topk_blocks <= 0)
    fail("select_blocks: block_size {} and topk_blocks {} must be positive", a.block_size,
         a.topk_blocks);
  if (a.init_blocks < 0 || a.local_blocks < 0 || a.init_blocks + a.local_blocks > a.topk_blocks)
    fail("select_blocks: {} initial + {} local forced blocks exceed top-{}", a.init_blocks,
         a.local_blocks, a.topk_blocks);
  if (a.page_table != nullptr && a.page_size <= 0)
    fail("select_blocks: page_size {} must be positive with a page table", a.page_size);
  if (a.T <= 0) return;
  const AttentionKernels& kernels = cpu_ops_detail::attention_kernels(isa);
  const float* index_k_cache = reference::f32_kv(a.index_k_cache, a.kv_dtype, "select_blocks");
  const int heads = a.num_index_heads;
  const int forced = a.init_blocks + a.local_blocks;
  auto num_blocks = [&](int64_t t) { return static_cast<int>(a.positions[t] / a.block_size) + 1; };

  // Scores of the blocks that compete (not forced) of the tokens that choose: token t's are
  // [first[t], first[t + 1]) in `scores`, block init_blocks first, heads innermost.
  thread_local std::vector<int64_t> first;
  thread_local std::vector<double> scores;
  first.resize(a.T + 1);
  first[0] = 0;
  for (int64_t t = 0; t < a.T; ++t) {
    const int nblk = num_blocks(t);
    first[t + 1] = first[t] + (nblk > a.topk_blocks ? nblk - forced : 0);
  }
  const int64_t units = first[a.T];
  scores.resize(static_cast<size_t>(units * heads));

  // Phase 1: the block scores, units split evenly across threads (a token's blocks may be split).
  if (units > 0) {
    const int64_t threads = pool == nullptr ? 1 : static_cast<int64_t>(pool->size());
    const int64_t parts = std::min(threads, units);
    const int64_t* starts = first.data();
    double* score_data = scores.data();
    auto score_units = [&](int64_t begin, int64_t end) {
      thread_local std::vector<double> scratch;
      const auto need =
          static_cast<size_t>(cpu_ops_detail::block_score_scratch_doubles(heads, a.index_dim));
      if (scratch.size() < need) scratch.resize(need);
      int64_t t = std::upper_bound(starts, starts + a.T + 1, begin) - starts - 1;
      for (int64_t u = begin; u < end; ++t) {
        const int64_t stop = std::min(end, starts[t + 1]);
        if (stop <= u) continue;
        BlockScoreJob job;
        job.q = a.index_q + t * heads * a.index_dim;
        job.heads = heads;
        job.dim = a.index_dim;
        job.k_cache = index_k_cache;
        job.k_stride = a.index_k_stride;
        job.page_table = a.page_table;
        job.page_size = a.page_size;
        job.block_size = a.block_size;
        job.last_slot = a.positions[t];
        job.block_begin = a.init_blocks + static_cast<int>(u - starts[t]);
        job.block_end = a.init_blocks + static_cast<int>(stop - starts[t]);
        job.scores = score_data + u * heads;
        kernels.block_scores(job, scratch.data());
        u = stop;
      }
    };
    if (parts <= 1) {
      score_units(0, units);
    } else {
      struct Context {
        decltype(score_units)* fn;
        int64_t units, parts;
      } ctx{&score_units, units, parts};
      const Context* c = &ctx;
      pool->parallel_for(static_cast<size_t>(parts), [c](size_t begin, size_t end, size_t) {
        for (size_t p = begin; p < end; ++p)
          (*c->fn)(c->units * int64_t(p) / c->parts, c->units * int64_t(p + 1) / c->parts);
      });
    }
  }

  // Phase 2: per (token, index head), the forced blocks plus the best competitors by score, ties
  // to the lower block id (the reference's stable sort), written ascending and −1 padded.
  for (int64_t t = 0; t < a.T; ++t) {
    thread_local std::vector<int> candidates, chosen;
    const int nblk = num_blocks(t);
    for (int g = 0; g < heads; ++g) {
      int32_t* out = a.block_ids + (t * heads + g) * a.topk_blocks;
      chosen.clear();
      if (nblk <= a.topk_blocks) {
        for (int b = 0; b < nblk; ++b) chosen.push_back(b);
      } else {
        const double* s = scores.data() + first[t] * heads + g;  // block b at s[(b − init)·heads]
        auto score = [&](int b) { return s[int64_t(b - a.init_blocks) * heads]; };
        candidates.clear();
        for (int b = a.init_blocks; b < nblk - a.local_blocks; ++b) candidates.push_back(b);
        const int wanted = a.topk_blocks - forced;
        std::partial_sort(candidates.begin(), candidates.begin() + wanted, candidates.end(),
                          [&](int x, int y) {
                            const double sx = score(x), sy = score(y);
                            return sx > sy || (sx == sy && x < y);
                          });
        for (int b = 0; b < a.init_blocks; ++b) chosen.push_back(b);
        chosen.insert(chosen.end(), candidates.begin(), candidates.begin() + wanted);
        for (int b = nblk - a.local_blocks; b < nblk; ++b) chosen.push_back(b);
        std::sort(chosen.begin(), chosen.end());
      }
      for (int i = 0; i < a.topk_blocks; ++i)
        out[i] = i < static_cast<int>(chosen.size()) ? chosen[i] : -1;
    }
  }
}

void cpu_select_blocks(const BlockSelectArgs& args, ThreadPool* pool) {
  cpu_select_blocks_at(args, pool, default_cpu_isa());
}

}  // namespace minimax
