// The token-run index of the drafters (runtime/spec/token_index.h).
#include "runtime/spec/token_index.h"

#include <algorithm>

#include "base/error.h"

namespace minimax {

TokenIndex::TokenIndex(int key_length) : key_length_(key_length) {
  if (key_length < 1) fail("TokenIndex: key length must be >= 1, got {}", key_length);
}

uint64_t TokenIndex::hash_run(std::span<const int32_t> run) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int32_t t : run) {
    h ^= static_cast<uint32_t>(t) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
  }
  return h;
}

void TokenIndex::extend(std::span<const int32_t> tokens) {
  const auto size = static_cast<int64_t>(tokens.size());
  if (size < indexed_) {
    ends_.clear();
    indexed_ = 0;
  }
  // A run ending at e covers [e - k, e): ends from k to size are complete runs.
  for (int64_t e = std::max<int64_t>(indexed_, key_length_); e <= size; ++e)
    ends_[hash_run(tokens.subspan(e - key_length_, key_length_))].push_back(e);
  indexed_ = std::max(indexed_, size + 1);
}

std::vector<int64_t> TokenIndex::earlier_ends(std::span<const int32_t> tokens, int limit) const {
  std::vector<int64_t> out;
  const auto size = static_cast<int64_t>(tokens.size());
  if (size < key_length_ || limit <= 0) return out;
  const auto last = tokens.subspan(size - key_length_, key_length_);
  auto it = ends_.find(hash_run(last));
  if (it == ends_.end()) return out;
  for (auto e = it->second.rbegin(); e != it->second.rend(); ++e) {
    if (*e >= size) continue;  // the last run itself (or a stale end past a rollback)
    // The hash is 64 bits; a collision must not draft nonsense, so the run is compared.
    if (!std::equal(last.begin(), last.end(), tokens.begin() + (*e - key_length_))) continue;
    out.push_back(*e);
    if (static_cast<int>(out.size()) == limit) break;
  }
  return out;
}

int64_t common_suffix(std::span<const int32_t> a, int64_t a_end, std::span<const int32_t> b,
                      int64_t b_end, int64_t limit) {
  int64_t n = 0;
  while (n < limit && n < a_end && n < b_end && a[a_end - 1 - n] == b[b_end - 1 - n]) ++n;
  return n;
}

}  // namespace minimax
