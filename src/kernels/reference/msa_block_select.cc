// Reference MSA (M3's block-sparse attention) block selection: per query and index head, the score
// of a block is the max over its visible slots of index_q · index_k; the first init_blocks and the
// last local_blocks are always chosen, then the best of the others, ties to the lower block id.
// spec/model.md §5 (MSA).
#include <algorithm>
#include <limits>
#include <vector>

#include "base/error.h"
#include "kernels/kv_codec.h"
#include "kernels/reference/reference_ops.h"

namespace minimax::reference {

void check_block_select_args(const BlockSelectArgs& a) {
  if (a.block_size <= 0 || a.topk_blocks <= 0)
    fail("select_blocks: block_size {} and topk_blocks {} must be positive", a.block_size,
         a.topk_blocks);
  if (a.init_blocks < 0 || a.local_blocks < 0 || a.init_blocks + a.local_blocks > a.topk_blocks)
    fail("select_blocks: {} initial + {} local forced blocks exceed top-{}", a.init_blocks,
         a.local_blocks, a.topk_blocks);
  if (a.page_table != nullptr && a.page_size <= 0)
    fail("select_blocks: page_size {} must be positive with a page table", a.page_size);
}

void select_blocks(const BlockSelectArgs& a, ThreadPool* pool) {
  check_block_select_args(a);
  for_range(pool, a.T * a.num_index_heads, [&](int64_t begin, int64_t end) {
    std::vector<int> chosen, others;
    std::vector<double> score;
    std::vector<float> key(a.index_dim);  // one slot's index key, decoded
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / a.num_index_heads;
      const int64_t pos = a.positions[t];
      const int nblk = static_cast<int>(pos / a.block_size) + 1;
      int32_t* out = a.block_ids + item * a.topk_blocks;
      chosen.clear();
      if (nblk <= a.topk_blocks) {
        for (int b = 0; b < nblk; ++b) chosen.push_back(b);
      } else {
        auto forced = [&](int b) { return b < a.init_blocks || b >= nblk - a.local_blocks; };
        const float* q = a.index_q + item * a.index_dim;
        score.assign(nblk, -std::numeric_limits<double>::infinity());
        others.clear();
        for (int b = 0; b < nblk; ++b) {
          if (forced(b)) {
            chosen.push_back(b);
            continue;
          }
          others.push_back(b);
          const int64_t last = std::min<int64_t>(int64_t(b + 1) * a.block_size - 1, pos);
          for (int64_t s = int64_t(b) * a.block_size; s <= last; ++s) {
            const int64_t row = cache_row(a.page_table, a.page_size, s);
            const float* k = key.data();
            decode_kv_row(kv_element(a.index_k_cache, a.kv_dtype, row * a.index_k_stride),
                          a.index_dim, a.kv_dtype, key.data());
            double dot = 0;
            for (int c = 0; c < a.index_dim; ++c) dot += static_cast<double>(q[c]) * k[c];
            score[b] = std::max(score[b], dot);
          }
        }
        // Score descending, ties to the lower block id (MSA's exact reference order).
        std::stable_sort(others.begin(), others.end(),
                         [&](int x, int y) { return score[x] > score[y]; });
        const size_t wanted = a.topk_blocks - chosen.size();
        for (size_t i = 0; i < wanted && i < others.size(); ++i) chosen.push_back(others[i]);
        std::sort(chosen.begin(), chosen.end());
      }
      for (int i = 0; i < a.topk_blocks; ++i)
        out[i] = i < static_cast<int>(chosen.size()) ? chosen[i] : -1;
    }
  });
}

}  // namespace minimax::reference
