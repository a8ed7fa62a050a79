// One sequence on a loaded model: its KV cache and the tokens it holds, as the generation loop's
// LogitsSource. A new prompt reuses the longest prefix the cache already holds (a chat's earlier
// turns are not recomputed) and is prefilled in chunks so activations stay bounded.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/model.h"
#include "runtime/generator.h"
#include "runtime/prefill_chunk.h"

namespace minimax {

class ModelSession : public LogitsSource {
 public:
  // `model` must outlive the session. `capacity` tokens of KV cache of element type `kv_dtype`
  // are allocated up front.
  ModelSession(Model& model, int64_t capacity, int64_t prefill_chunk = kDefaultPrefillChunk,
               KvDtype kv_dtype = KvDtype::kF32);

  std::vector<float> prefill(std::span<const int32_t> prompt) override;
  std::vector<float> decode(int32_t token) override;
  std::vector<float> decode_all(std::span<const int32_t> tokens) override;
  void truncate(int64_t length) override;
  int64_t capacity() const override { return cache_.capacity(); }
  int64_t reused_prefix() const override { return reused_; }
  void set_tap_sink(TapSink sink) override { tap_sink_ = std::move(sink); }

  // The tokens whose keys and values the cache holds, in position order.
  const std::vector<int32_t>& tokens() const { return tokens_; }
  // Forgets the sequence (the cache's memory is kept).
  void reset();

 private:
  // Runs `tokens` at positions tokens_.size()... and appends them.
  std::vector<float> run(std::span<const int32_t> tokens, LogitsFor which = LogitsFor::kLastToken);

  Model& model_;
  KvCache cache_;
  int64_t prefill_chunk_;
  std::vector<int32_t> tokens_;
  int64_t reused_ = 0;
  TapSink tap_sink_;
};

}  // namespace minimax
