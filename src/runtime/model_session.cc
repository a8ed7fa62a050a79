// A sequence's KV cache and tokens over a Model (runtime/model_session.h).
#include "runtime/model_session.h"

#include <algorithm>

#include "base/error.h"

namespace minimax {

ModelSession::ModelSession(Model& model, int64_t capacity, int64_t prefill_chunk, KvDtype kv_dtype)
    : model_(model), cache_(model.new_cache(capacity, kv_dtype)), prefill_chunk_(prefill_chunk) {
  if (prefill_chunk <= 0) fail("prefill chunk: must be > 0, got {}", prefill_chunk);
}

void ModelSession::reset() {
  tokens_.clear();
  cache_.clear();
  reused_ = 0;
}

std::vector<float> ModelSession::run(std::span<const int32_t> tokens, LogitsFor which) {
  const auto start = static_cast<int64_t>(tokens_.size());
  if (start + static_cast<int64_t>(tokens.size()) > cache_.capacity())
    fail("context: {} tokens do not fit the KV cache of {} tokens", start + tokens.size(),
         cache_.capacity());
  std::vector<int32_t> positions(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) positions[i] = static_cast<int32_t>(start + i);
  std::vector<float> logits = model_.forward(tokens, positions, cache_, which);
  if (tap_sink_) tap_sink_(start, static_cast<int64_t>(tokens.size()), model_.hidden_taps());
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
  return logits;
}

std::vector<float> ModelSession::prefill(std::span<const int32_t> prompt) {
  if (prompt.empty()) fail("prefill: empty prompt");
  // Slots past the kept prefix hold stale keys; they are overwritten before any query sees them
  // (a query at position p attends slots [0, p] only).
  const size_t limit = std::min(tokens_.size(), prompt.size() - 1);  // at least one token runs
  size_t common = 0;
  while (common < limit && tokens_[common] == prompt[common]) ++common;
  tokens_.resize(common);
  reused_ = static_cast<int64_t>(common);
  std::vector<float> logits;
  for (size_t begin = common; begin < prompt.size(); begin += prefill_chunk_) {
    const size_t end = std::min(prompt.size(), begin + static_cast<size_t>(prefill_chunk_));
    logits = run(prompt.subspan(begin, end - begin));
  }
  return logits;
}

std::vector<float> ModelSession::decode(int32_t token) { return run(std::span(&token, 1)); }

std::vector<float> ModelSession::decode_all(std::span<const int32_t> tokens) {
  if (tokens.empty()) fail("decode_all: no tokens");
  return run(tokens, LogitsFor::kAllTokens);
}

void ModelSession::truncate(int64_t length) {
  if (length < 0 || length > static_cast<int64_t>(tokens_.size()))
    fail("truncate: length {} outside [0, {}]", length, tokens_.size());
  // Keys past `length` stay in the slots until overwritten; no query attends them.
  tokens_.resize(static_cast<size_t>(length));
  cache_.set_length(length);
}

}  // namespace minimax
