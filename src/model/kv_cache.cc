// Contiguous per-layer KV cache.
#include "model/kv_cache.h"

#include <algorithm>

#include "base/error.h"

namespace minimax {

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

void KvCache::clear() {
  std::fill(filled_.begin(), filled_.end(), 0);
  length_ = 0;
}

}  // namespace minimax
