// Reference causal GQA attention over a KV cache, attending only the MSA blocks chosen for each
// query when given (the choice itself is msa_block_select.cc).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/error.h"
#include "kernels/kv_codec.h"
#include "kernels/reference/reference_ops.h"

namespace minimax::reference {
namespace {

// The visible cache slots of query t for KV group g, ascending: [0, pos] when dense, else the
// slots of the selected blocks clipped to [0, pos].
void visible_slots(const AttentionArgs& a, int64_t t, int g, std::vector<int64_t>& slots) {
  slots.clear();
  const int64_t pos = a.positions[t];
  if (a.block_ids == nullptr) {
    for (int64_t s = 0; s <= pos; ++s) slots.push_back(s);
    return;
  }
  const int64_t groups = a.block_groups > 0 ? a.block_groups : a.num_kv_heads;
  const int32_t* blocks = a.block_ids + (t * groups + a.block_group_begin + g) * a.max_blocks;
  for (int i = 0; i < a.max_blocks && blocks[i] >= 0; ++i) {
    const int64_t first = int64_t(blocks[i]) * a.block_size;
    const int64_t last = std::min<int64_t>(first + a.block_size - 1, pos);
    for (int64_t s = first; s <= last; ++s) slots.push_back(s);
  }
}

}  // namespace

void check_attention_args(const AttentionArgs& a) {
  if (a.num_kv_heads <= 0 || a.num_heads % a.num_kv_heads != 0)
    fail("attention: {} query heads are not a multiple of {} KV heads", a.num_heads,
         a.num_kv_heads);
  if (a.block_ids != nullptr && (a.block_size <= 0 || a.max_blocks <= 0))
    fail("attention: block selection needs block_size and max_blocks > 0");
  if (a.block_ids != nullptr && a.block_groups > 0 &&
      (a.block_group_begin < 0 || a.block_group_begin + a.num_kv_heads > a.block_groups))
    fail("attention: KV groups [{}, {}) are outside the block choice's {} groups",
         a.block_group_begin, a.block_group_begin + a.num_kv_heads, a.block_groups);
  if (a.page_table != nullptr && a.page_size <= 0)
    fail("attention: page_size {} must be positive with a page table", a.page_size);
}

void attention(const AttentionArgs& a, ThreadPool* pool) {
  check_attention_args(a);
  const int group = a.num_heads / a.num_kv_heads;
  const int64_t d = a.head_dim;
  for_range(pool, a.T * a.num_heads, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> slots;
    std::vector<double> scores, acc(d);
    std::vector<float> row_values(d);  // one slot's K or V row of this group, decoded
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / a.num_heads;
      const int h = static_cast<int>(item % a.num_heads), g = h / group;
      visible_slots(a, t, g, slots);
      const float* q = a.q + (t * a.num_heads + h) * d;
      float* out = a.out + (t * a.num_heads + h) * d;
      if (slots.empty()) {  // cannot happen causally (slot pos is always visible); keep it defined
        std::fill(out, out + d, 0.0f);
        continue;
      }
      scores.assign(slots.size(), 0.0);
      double max_score = -std::numeric_limits<double>::infinity();
      for (size_t i = 0; i < slots.size(); ++i) {
        const int64_t row = cache_row(a.page_table, a.page_size, slots[i]);
        const float* k = row_values.data();
        decode_kv_row(kv_element(a.k_cache, a.kv_dtype, row * a.cache_stride + g * d), d,
                      a.kv_dtype, row_values.data());
        double dot = 0;
        for (int64_t c = 0; c < d; ++c) dot += static_cast<double>(q[c]) * k[c];
        scores[i] = dot * a.scale;
        max_score = std::max(max_score, scores[i]);
      }
      double denom = 0;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (size_t i = 0; i < slots.size(); ++i) {
        const double p = std::exp(scores[i] - max_score);
        denom += p;
        const int64_t row = cache_row(a.page_table, a.page_size, slots[i]);
        const float* v = row_values.data();
        decode_kv_row(kv_element(a.v_cache, a.kv_dtype, row * a.cache_stride + g * d), d,
                      a.kv_dtype, row_values.data());
        for (int64_t c = 0; c < d; ++c) acc[c] += p * v[c];
      }
      for (int64_t c = 0; c < d; ++c) out[c] = static_cast<float>(acc[c] / denom);
    }
  });
}

}  // namespace minimax::reference
