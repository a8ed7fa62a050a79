// Key/value cache of one sequence: per layer a contiguous [capacity, kv_heads·head_dim] block for
// K and for V (f32, after QK norm and RoPE), and on MSA layers the index-key cache
// [capacity, index_dim]. Slot s holds the token at position s.
#pragma once

#include <cstdint>
#include <vector>

#include "checkpoint/model_config.h"

namespace minimax {

class KvCache {
 public:
  KvCache(const ModelConfig& config, int64_t capacity);

  int64_t capacity() const { return capacity_; }
  // Number of slots filled from slot 0 without a gap: positions below it may be attended.
  int64_t length() const { return length_; }
  int64_t kv_width() const { return kv_width_; }  // floats per slot in k / v
  int64_t index_width() const { return index_width_; }

  float* k(int layer) { return k_[layer].data(); }
  float* v(int layer) { return v_[layer].data(); }
  float* index_k(int layer) { return index_k_[layer].data(); }  // empty on dense layers

  // Records that `positions` were written; throws Error naming the position when one is outside
  // [0, capacity).
  void mark_filled(const int32_t* positions, int64_t count);
  void check_position(int32_t position) const;
  // Forgets every token (the buffers are kept).
  void clear();

 private:
  int64_t capacity_ = 0, kv_width_ = 0, index_width_ = 0, length_ = 0;
  std::vector<std::vector<float>> k_, v_, index_k_;
  std::vector<uint8_t> filled_;
};

}  // namespace minimax
