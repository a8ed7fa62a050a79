// MSA (M3's block-sparse attention) block selection on the CPU, with the reference's exact scores:
// each dot product is the reference's sequential double sum (vectorised across slots, not across
// dimensions), so the chosen blocks are the reference's, ties included. The per-ISA score kernel
// is attention_kernels-inl.h's block_scores.
#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/cpu/attention_kernels.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {

using cpu_ops_detail::AttentionKernels;
using cpu_ops_detail::BlockScoreJob;

void cpu_select_blocks_at(const BlockSelectArgs& a, ThreadPool* pool, CpuIsa isa) {
  reference::check_block_select_args(a);
  if (a.T <= 0) return;
  const AttentionKernels& kernels = cpu_ops_detail::attention_kernels(isa);
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
        job.k_cache = a.index_k_cache;
        job.k_stride = a.index_k_stride;
        job.dtype = a.kv_dtype;
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
