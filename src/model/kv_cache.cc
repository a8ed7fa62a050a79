// The KV block pool (backend memory) and the per-sequence paged cache.
#include "model/kv_cache.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"

namespace minimax {

KvBlockPool::KvBlockPool(Backend& backend, const ModelConfig& config, int64_t num_blocks,
                         int64_t block_size, KvDtype dtype)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      kv_width_(int64_t(config.num_kv_heads) * config.head_dim),
      index_width_(config.sparse.enabled ? config.sparse.index_dim : 0),
      dtype_(dtype) {
  if (num_blocks <= 0) fail("KV block pool: num_blocks must be positive, got {}", num_blocks);
  if (block_size <= 0) fail("KV block pool: block_size must be positive, got {}", block_size);
  const int64_t rows = num_blocks * block_size, element = kv_dtype_bytes(dtype);
  k_.resize(config.num_layers);
  v_.resize(config.num_layers);
  index_k_.resize(config.num_layers);
  for (int l = 0; l < config.num_layers; ++l) {
    k_[l] = backend.allocate(rows * kv_width_ * element, "KV cache keys");
    v_[l] = backend.allocate(rows * kv_width_ * element, "KV cache values");
    if (config.is_sparse_layer(l))
      index_k_[l] = backend.allocate(rows * index_width_ * element, "KV cache index keys");
  }
}

KvBlockPool::~KvBlockPool() {
  if (on_release_) on_release_();
}

void KvBlockPool::link(int64_t id, std::function<void()> on_release) {
  link_id_ = id;
  on_release_ = std::move(on_release);
}

int64_t KvBlockPool::bytes_per_block(const ModelConfig& config, int64_t block_size, KvDtype dtype) {
  const int64_t kv_width = int64_t(config.num_kv_heads) * config.head_dim;
  const int64_t index_width = config.sparse.enabled ? config.sparse.index_dim : 0;
  int64_t elements = 0;
  for (int l = 0; l < config.num_layers; ++l)
    elements += 2 * kv_width + (config.is_sparse_layer(l) ? index_width : 0);
  return elements * block_size * kv_dtype_bytes(dtype);
}

KvCache::KvCache(KvBlockPool& pool, std::vector<int32_t> block_table) : pool_(&pool) {
  set_block_table(std::move(block_table));
}

KvCache::KvCache(std::unique_ptr<KvBlockPool> pool)
    : own_pool_(std::move(pool)), pool_(own_pool_.get()) {
  std::vector<int32_t> all(pool_->num_blocks());
  std::iota(all.begin(), all.end(), 0);
  set_block_table(std::move(all));
}

void KvCache::set_block_table(std::vector<int32_t> table) {
  for (size_t i = 0; i < table.size(); ++i)
    if (table[i] < 0 || table[i] >= pool_->num_blocks())
      fail("KV cache: block_table[{}] = {} is outside the pool of {} blocks", i, table[i],
           pool_->num_blocks());
  block_table_ = std::move(table);
  capacity_ = static_cast<int64_t>(block_table_.size()) * pool_->block_size();
  set_length(std::min(length_, capacity_));
}

void KvCache::set_length(int64_t n) {
  if (n < 0 || n > capacity_)
    fail("KV cache: set_length({}) is outside [0, capacity {}]", n, capacity_);
  filled_.assign(capacity_, 0);
  std::fill_n(filled_.begin(), n, 1);
  length_ = n;
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
