// The KV block pool and the per-sequence KV cache (contiguous or paged into a pool).
#include "model/kv_cache.h"

#include <algorithm>

#include "base/error.h"

namespace minimax {

KvBlockPool::KvBlockPool(const ModelConfig& config, int64_t num_blocks, int64_t block_size)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      kv_width_(int64_t(config.num_kv_heads) * config.head_dim),
      index_width_(config.sparse.enabled ? config.sparse.index_dim : 0) {
  if (num_blocks <= 0) fail("KV block pool: num_blocks must be positive, got {}", num_blocks);
  if (block_size <= 0) fail("KV block pool: block_size must be positive, got {}", block_size);
  const int64_t rows = num_blocks * block_size;
  k_.resize(config.num_layers);
  v_.resize(config.num_layers);
  index_k_.resize(config.num_layers);
  for (int l = 0; l < config.num_layers; ++l) {
    k_[l].assign(rows * kv_width_, 0.0f);
    v_[l].assign(rows * kv_width_, 0.0f);
    if (config.is_sparse_layer(l)) index_k_[l].assign(rows * index_width_, 0.0f);
  }
}

int64_t KvBlockPool::bytes_per_block(const ModelConfig& config, int64_t block_size) {
  const int64_t kv_width = int64_t(config.num_kv_heads) * config.head_dim;
  const int64_t index_width = config.sparse.enabled ? config.sparse.index_dim : 0;
  int64_t floats = 0;
  for (int l = 0; l < config.num_layers; ++l)
    floats += 2 * kv_width + (config.is_sparse_layer(l) ? index_width : 0);
  return floats * block_size * int64_t(sizeof(float));
}

KvCache::KvCache(const ModelConfig& config, int64_t capacity)
    : capacity_(capacity),
      kv_width_(int64_t(config.num_kv_heads) * config.head_dim),
      index_width_(config.sparse.enabled ? config.sparse.index_dim : 0) {
  if (capacity <= 0) fail("KV cache: capacity must be positive, got {}", capacity);
  k_.resize(config.num_layers);
  v_.resize(config.num_layers);
  index_k_.resize(config.num_layers);
  for (int l = 0; l < config.num_layers; ++l) {
    k_[l].assign(capacity * kv_width_, 0.0f);
    v_[l].assign(capacity * kv_width_, 0.0f);
    if (config.is_sparse_layer(l)) index_k_[l].assign(capacity * index_width_, 0.0f);
  }
  filled_.assign(capacity, 0);
}

KvCache::KvCache(KvBlockPool& pool, std::vector<int32_t> block_table)
    : kv_width_(pool.kv_width()),
      index_width_(pool.index_width()),
      pool_(&pool),
      block_size_(pool.block_size()) {
  set_block_table(std::move(block_table));
}

void KvCache::set_block_table(std::vector<int32_t> table) {
  if (!paged()) fail("KV cache: set_block_table on a contiguous cache");
  for (size_t i = 0; i < table.size(); ++i)
    if (table[i] < 0 || table[i] >= pool_->num_blocks())
      fail("KV cache: block_table[{}] = {} is outside the pool of {} blocks", i, table[i],
           pool_->num_blocks());
  block_table_ = std::move(table);
  capacity_ = static_cast<int64_t>(block_table_.size()) * block_size_;
  set_length(std::min(length_, capacity_));
}

void KvCache::set_length(int64_t n) {
  if (n < 0 || n > capacity_)
    fail("KV cache: set_length({}) is outside [0, capacity {}]", n, capacity_);
  filled_.assign(capacity_, 0);
  std::fill_n(filled_.begin(), n, 1);
  length_ = n;
}

float* KvCache::k(int layer) { return paged() ? pool_->k(layer) : k_[layer].data(); }
float* KvCache::v(int layer) { return paged() ? pool_->v(layer) : v_[layer].data(); }
float* KvCache::index_k(int layer) {
  return paged() ? pool_->index_k(layer) : index_k_[layer].data();
}

void KvCache::check_position(int32_t position) const {
  if (position < 0 || position >= capacity_)
    fail("KV cache: position {} is outside the cache of {} tokens", position, capacity_);
}

void KvCache::mark_filled(const int32_t* positions, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    check_position(positions[i]);
    filled_[positions[i]] = 1;
  }
  while (length_ < capacity_ && filled_[length_]) ++length_;
}

int64_t KvCache::length_after(const int32_t* positions, int64_t count) const {
  std::vector<int32_t> added(positions, positions + count);
  std::sort(added.begin(), added.end());
  int64_t n = length_;
  while (n < capacity_ &&
         (filled_[n] || std::binary_search(added.begin(), added.end(), static_cast<int32_t>(n))))
    ++n;
  return n;
}

void KvCache::clear() {
  std::fill(filled_.begin(), filled_.end(), 0);
  length_ = 0;
}

}  // namespace minimax
