// The paged key/value cache, one design for every caller: storage is a KvBlockPool of blocks in the
// backend's memory, and each sequence is a KvCache, a block table into a pool. The serving engine
// shares one pool between its requests (runtime's block manager decides which request holds which
// block); a single-sequence caller (generate, logits, tests) gets a cache that owns a pool of one
// block of its capacity, which is the contiguous layout. Per layer the pool holds K and V rows
// [slot, kv_heads·head_dim] (after QK norm and RoPE) and on MSA layers the index keys
// [slot, index_dim], in the pool's element type. Slot s of a sequence lives at storage row
// block_table[s / block_size]·block_size + s % block_size.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "checkpoint/model_config.h"
#include "kernels/backend.h"

namespace minimax {

// Pages of KV storage shared by many sequences: num_blocks blocks of block_size slots. Storage
// only: which sequence owns which block, reference counts and prefix sharing are the caller's.
class KvBlockPool {
 public:
  // Allocates (zeroed) from `backend`, which must outlive the pool. The element type is a
  // parameter; the host kernels implement f32 today and throw naming the op for the others.
  KvBlockPool(Backend& backend, const ModelConfig& config, int64_t num_blocks, int64_t block_size,
              KvDtype dtype = KvDtype::kF32);
  ~KvBlockPool();
  KvBlockPool(const KvBlockPool&) = delete;
  KvBlockPool& operator=(const KvBlockPool&) = delete;

  // Under several ranks every rank holds a pool of the same geometry (model.h); `id` names it in
  // the steps rank 0 sends, and `on_release` runs when this pool is destroyed (the other ranks
  // free theirs).
  void link(int64_t id, std::function<void()> on_release);
  int64_t link_id() const { return link_id_; }  // -1 when not linked

  // Bytes one block takes over all layers (K, V and the MSA index keys).
  static int64_t bytes_per_block(const ModelConfig& config, int64_t block_size,
                                 KvDtype dtype = KvDtype::kF32);

  int64_t num_blocks() const { return num_blocks_; }
  int64_t block_size() const { return block_size_; }
  KvDtype dtype() const { return dtype_; }
  int num_layers() const { return static_cast<int>(k_.size()); }
  int64_t kv_width() const { return kv_width_; }  // elements per slot in k / v
  int64_t index_width() const { return index_width_; }

  // Row r = block·block_size + offset of layer `layer`'s storage starts at element r·width.
  void* k(int layer) { return k_[layer].data(); }
  void* v(int layer) { return v_[layer].data(); }
  void* index_k(int layer) { return index_k_[layer].data(); }  // null on dense layers

 private:
  int64_t num_blocks_ = 0, block_size_ = 0, kv_width_ = 0, index_width_ = 0;
  KvDtype dtype_ = KvDtype::kF32;
  std::vector<DeviceBuffer> k_, v_, index_k_;
  int64_t link_id_ = -1;
  std::function<void()> on_release_;
};

class KvCache {
 public:
  // A sequence's view of `pool` (not owned; must outlive the cache). Capacity = table size ·
  // block_size.
  explicit KvCache(KvBlockPool& pool, std::vector<int32_t> block_table = {});
  // A cache that owns `pool` and uses all of its blocks in order.
  explicit KvCache(std::unique_ptr<KvBlockPool> pool);

  const std::vector<int32_t>& block_table() const { return block_table_; }
  // Replaces the table (the engine appends blocks as the sequence grows, or swaps in shared
  // prefix blocks). Filled state is kept for slots below min(length(), new capacity); every
  // other slot becomes empty. Error on a block id outside the pool.
  void set_block_table(std::vector<int32_t> table);
  // Declares slots [0, n) filled (computed earlier, or shared from another sequence with the same
  // prefix tokens) and every slot from n on empty. Error if n > capacity.
  void set_length(int64_t n);

  KvBlockPool& pool() const { return *pool_; }
  int64_t capacity() const { return capacity_; }
  // Number of slots filled from slot 0 without a gap: positions below it may be attended.
  int64_t length() const { return length_; }
  int64_t kv_width() const { return pool_->kv_width(); }
  int64_t index_width() const { return pool_->index_width(); }
  KvDtype dtype() const { return pool_->dtype(); }

  // Storage base of a layer in backend memory: slot s is at row storage_row(s).
  void* k(int layer) { return pool_->k(layer); }
  void* v(int layer) { return pool_->v(layer); }
  void* index_k(int layer) { return pool_->index_k(layer); }  // null on dense layers
  int page_size() const { return static_cast<int>(pool_->block_size()); }
  // The storage row of slot s (no bounds check; check_position first).
  int64_t storage_row(int64_t slot) const {
    const int64_t bs = pool_->block_size();
    return int64_t(block_table_[slot / bs]) * bs + slot % bs;
  }

  // Records that `positions` were written; throws Error naming the position when one is outside
  // [0, capacity).
  void mark_filled(const int32_t* positions, int64_t count);
  // length() as it would be after mark_filled(positions, count), without changing anything
  // (positions must pass check_position).
  int64_t length_after(const int32_t* positions, int64_t count) const;
  void check_position(int32_t position) const;
  // Forgets every token (the storage and the table are kept).
  void clear();

 private:
  std::unique_ptr<KvBlockPool> own_pool_;  // single-sequence caches only
  KvBlockPool* pool_ = nullptr;
  int64_t capacity_ = 0, length_ = 0;
  std::vector<uint8_t> filled_;
  std::vector<int32_t> block_table_;
};

}  // namespace minimax
