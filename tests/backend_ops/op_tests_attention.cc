// The inputs and calls of attention and MSA block choice: T new queries at positions context,
// context + 1, ... over a cache of context + T slots, in any KV type, contiguous or paged.
#include <algorithm>
#include <cmath>

#include "op_inputs.h"

namespace minimax {
namespace {

struct CacheLayout {
  int64_t slots = 0;
  std::vector<int32_t> pages, positions;
};

CacheLayout cache_layout(const OpCase& c, std::mt19937& rng) {
  CacheLayout l;
  l.slots = c.context + c.T;
  l.pages = shuffled_page_table(l.slots, c.page_size, rng);
  for (int64_t t = 0; t < c.T; ++t) l.positions.push_back(static_cast<int32_t>(c.context + t));
  return l;
}

// Per (token, KV group): the last visible block plus a random choice of the others, at most
// topk_blocks, ascending, -1 padded (what select_blocks hands attention).
std::vector<int32_t> random_block_choice(const OpCase& c, const std::vector<int32_t>& positions,
                                         std::mt19937& rng) {
  std::vector<int32_t> ids(c.T * c.kv_heads * c.topk_blocks, -1);
  for (int64_t t = 0; t < c.T; ++t) {
    const int visible = positions[t] / c.block_size + 1;
    for (int g = 0; g < c.kv_heads; ++g) {
      std::vector<int32_t> chosen = {visible - 1};
      for (int b = 0; b < visible - 1 && static_cast<int>(chosen.size()) < c.topk_blocks; ++b)
        if (rng() % 2 == 0) chosen.push_back(b);
      std::sort(chosen.begin(), chosen.end());
      std::copy(chosen.begin(), chosen.end(), ids.begin() + (t * c.kv_heads + g) * c.topk_blocks);
    }
  }
  return ids;
}

class AttentionInputs : public OpInputs {
 public:
  AttentionInputs(const OpCase& c, std::mt19937& rng) : c_(c), cache_(cache_layout(c, rng)) {
    const int64_t width = int64_t{c.kv_heads} * c.head_dim;
    q_ = normal_floats(c.T * c.heads * c.head_dim, rng, 1.5f);
    k_ = random_cache(cache_.slots, width, c.kv, cache_.pages, c.page_size, rng, 1.5f);
    v_ = random_cache(cache_.slots, width, c.kv, cache_.pages, c.page_size, rng, 1.0f);
    if (c.block_size > 0) blocks_ = random_block_choice(c, cache_.positions, rng);
  }
  OpOutputs run(Backend& backend, ThreadPool* pool) const override {
    OnBackend dev(backend);
    const int64_t n = c_.T * c_.heads * c_.head_dim;
    AttentionArgs a;
    a.q = dev.put(q_);
    a.T = c_.T;
    a.num_heads = c_.heads;
    a.num_kv_heads = c_.kv_heads;
    a.head_dim = c_.head_dim;
    a.k_cache = dev.put(k_);
    a.v_cache = dev.put(v_);
    a.cache_stride = int64_t{c_.kv_heads} * c_.head_dim;
    a.kv_dtype = c_.kv;
    a.positions = dev.put(cache_.positions);
    a.scale = static_cast<float>(1 / std::sqrt(double(c_.head_dim)));
    if (!blocks_.empty()) {
      a.block_ids = dev.put(blocks_);
      a.max_blocks = c_.topk_blocks;
      a.block_size = c_.block_size;
    }
    if (!cache_.pages.empty()) {
      a.page_table = dev.put(cache_.pages);
      a.page_size = c_.page_size;
    }
    a.out = dev.outputs(n);
    dev.ops().attention(a, pool);
    return {dev.get(a.out, n), {}};
  }

 private:
  OpCase c_;
  CacheLayout cache_;
  std::vector<float> q_;
  std::vector<uint8_t> k_, v_;
  std::vector<int32_t> blocks_;
};

// Index heads = kv_heads, index_dim = head_dim.
class SelectBlocksInputs : public OpInputs {
 public:
  SelectBlocksInputs(const OpCase& c, std::mt19937& rng) : c_(c), cache_(cache_layout(c, rng)) {
    q_ = normal_floats(c.T * c.kv_heads * c.head_dim, rng);
    k_ = random_cache(cache_.slots, c.head_dim, c.kv, cache_.pages, c.page_size, rng, 1.0f);
  }
  OpOutputs run(Backend& backend, ThreadPool* pool) const override {
    OnBackend dev(backend);
    const int64_t n = c_.T * c_.kv_heads * c_.topk_blocks;
    BlockSelectArgs a;
    a.index_q = dev.put(q_);
    a.T = c_.T;
    a.num_index_heads = c_.kv_heads;
    a.index_dim = c_.head_dim;
    a.index_k_cache = dev.put(k_);
    a.index_k_stride = c_.head_dim;
    a.kv_dtype = c_.kv;
    a.positions = dev.put(cache_.positions);
    a.block_size = c_.block_size;
    a.topk_blocks = c_.topk_blocks;
    a.init_blocks = c_.init_blocks;
    a.local_blocks = c_.local_blocks;
    if (!cache_.pages.empty()) {
      a.page_table = dev.put(cache_.pages);
      a.page_size = c_.page_size;
    }
    a.block_ids = dev.put(std::vector<int32_t>(n, -7));
    dev.ops().select_blocks(a, pool);
    return {{}, dev.get(a.block_ids, n)};
  }

 private:
  OpCase c_;
  CacheLayout cache_;
  std::vector<float> q_;
  std::vector<uint8_t> k_;
};

}  // namespace

std::unique_ptr<OpInputs> make_attention_inputs(const OpCase& c, std::mt19937& rng) {
  switch (c.op) {
    case Op::kAttention:
      return std::make_unique<AttentionInputs>(c, rng);
    case Op::kSelectBlocks:
      return std::make_unique<SelectBlocksInputs>(c, rng);
    default:
      return nullptr;
  }
}

}  // namespace minimax
