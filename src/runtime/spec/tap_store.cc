// Taps of whole blocks kept across requests (runtime/spec/tap_store.h).
#include "runtime/spec/tap_store.h"

#include <algorithm>

#include "base/error.h"

namespace minimax {

TapStore::TapStore(int64_t width, int64_t block_tokens, int64_t max_bytes)
    : width_(width),
      block_tokens_(block_tokens),
      max_blocks_(width > 0 && block_tokens > 0
                      ? max_bytes / (width * block_tokens * static_cast<int64_t>(sizeof(float)))
                      : 0) {
  if (width <= 0 || block_tokens <= 0)
    fail("tap store: width {} and block of {} tokens must be positive", width, block_tokens);
}

uint64_t TapStore::chain(uint64_t previous, std::span<const int32_t> block_tokens) {
  // splitmix64's finalizer over the running value: every token moves every bit of the key.
  uint64_t h = previous ^ 0x9e3779b97f4a7c15ull;
  for (int32_t token : block_tokens) {
    h ^= static_cast<uint32_t>(token);
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    h *= 0x94d049bb133111ebull;
    h ^= h >> 29;
  }
  return h;
}

void TapStore::put(uint64_t key, std::span<const float> rows) {
  if (static_cast<int64_t>(rows.size()) != width_ * block_tokens_)
    fail("tap store: a block of {} floats, expected {}", rows.size(), width_ * block_tokens_);
  if (max_blocks_ == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (entries_.count(key) != 0) return;
  while (static_cast<int64_t>(entries_.size()) >= max_blocks_) {
    entries_.erase(recent_.back());
    recent_.pop_back();
  }
  recent_.push_front(key);
  entries_.emplace(key, Entry{std::vector<float>(rows.begin(), rows.end()), recent_.begin()});
}

bool TapStore::get(uint64_t key, std::vector<float>& out) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  recent_.splice(recent_.begin(), recent_, it->second.age);
  out.assign(it->second.rows.begin(), it->second.rows.end());
  return true;
}

int64_t TapStore::blocks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(entries_.size());
}

}  // namespace minimax
