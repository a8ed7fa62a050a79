// Key/value cache of one sequence, contiguous or paged. Per layer K and V rows [slot,
// kv_heads·head_dim] (f32, after QK norm and RoPE), and on MSA layers the index keys [slot,
// index_dim]. Slot s holds the token at position s. A contiguous cache owns one block of
// `capacity` rows per layer; a paged cache is a block table into a shared KvBlockPool, and slot s
// is row block_table[s / block_size]·block_size + s % block_size of the pool's storage.
#pragma once

#include <cstdint>
#include <vector>

#include "checkpoint/model_config.h"

namespace minimax {

// Pages of KV storage shared by many sequences: num_blocks blocks of block_size slots, for every
// layer K and V ([slot, kv_heads*head_dim] f32) and the index keys on MSA layers. Storage only:
// which sequence owns which block, reference counts and prefix sharing are the caller's business.
class KvBlockPool {
 public:
  KvBlockPool(const ModelConfig& config, int64_t num_blocks, int64_t block_size);
  KvBlockPool(const KvBlockPool&) = delete;
  KvBlockPool& operator=(const KvBlockPool&) = delete;

  // Bytes one block takes over all layers (K, V and the MSA index keys).
  static int64_t bytes_per_block(const ModelConfig& config, int64_t block_size);

  int64_t num_blocks() const { return num_blocks_; }
  int64_t block_size() const { return block_size_; }
  int num_layers() const { return static_cast<int>(k_.size()); }
  int64_t kv_width() const { return kv_width_; }  // floats per slot in k / v
  int64_t index_width() const { return index_width_; }

  // Row r = block·block_size + offset of layer `layer`'s storage starts at base + r·width.
  float* k(int layer) { return k_[layer].data(); }
  float* v(int layer) { return v_[layer].data(); }
  float* index_k(int layer) { return index_k_[layer].data(); }  // empty on dense layers

 private:
  int64_t num_blocks_ = 0, block_size_ = 0, kv_width_ = 0, index_width_ = 0;
  std::vector<std::vector<float>> k_, v_, index_k_;
};

class KvCache {
 public:
  // Contiguous, owns its memory.
  KvCache(const ModelConfig& config, int64_t capacity);
  // A sequence's paged view of `pool` (not owned; must outlive the cache). Slot s lives in block
  // block_table[s / block_size] at offset s % block_size. Capacity = table size * block_size.
  explicit KvCache(KvBlockPool& pool, std::vector<int32_t> block_table = {});

  bool paged() const { return pool_ != nullptr; }
  const std::vector<int32_t>& block_table() const { return block_table_; }
  // Replaces the table (the engine appends blocks as the sequence grows, or swaps in shared
  // prefix blocks). Filled state is kept for slots below min(length(), new capacity); every
  // other slot becomes empty. Error on a contiguous cache or a block id outside the pool.
  void set_block_table(std::vector<int32_t> table);
  // Declares slots [0, n) filled (computed earlier, or shared from another sequence with the same
  // prefix tokens) and every slot from n on empty. Error if n > capacity.
  void set_length(int64_t n);

  int64_t capacity() const { return capacity_; }
  // Number of slots filled from slot 0 without a gap: positions below it may be attended.
  int64_t length() const { return length_; }
  int64_t kv_width() const { return kv_width_; }  // floats per slot in k / v
  int64_t index_width() const { return index_width_; }

  // Storage base of a layer: slot s is at row storage_row(s) (contiguous: row s).
  float* k(int layer);
  float* v(int layer);
  float* index_k(int layer);  // empty on dense layers
  // For the kernels' optional page table: null and 0 when contiguous.
  const int32_t* page_table() const { return paged() ? block_table_.data() : nullptr; }
  int page_size() const { return paged() ? static_cast<int>(block_size_) : 0; }
  // The storage row of slot s (no bounds check; check_position first).
  int64_t storage_row(int64_t slot) const {
    return paged() ? int64_t(block_table_[slot / block_size_]) * block_size_ + slot % block_size_
                   : slot;
  }

  // Records that `positions` were written; throws Error naming the position when one is outside
  // [0, capacity).
  void mark_filled(const int32_t* positions, int64_t count);
  // length() as it would be after mark_filled(positions, count), without changing anything
  // (positions must pass check_position).
  int64_t length_after(const int32_t* positions, int64_t count) const;
  void check_position(int32_t position) const;
  // Forgets every token (the buffers, and a paged cache's table, are kept).
  void clear();

 private:
  int64_t capacity_ = 0, kv_width_ = 0, index_width_ = 0, length_ = 0;
  std::vector<std::vector<float>> k_, v_, index_k_;  // contiguous only
  std::vector<uint8_t> filled_;
  KvBlockPool* pool_ = nullptr;  // paged only
  int64_t block_size_ = 0;
  std::vector<int32_t> block_table_;
};

}  // namespace minimax
