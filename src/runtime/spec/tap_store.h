// The target's taps of whole blocks of positions, kept across the requests of one server for the
// EAGLE-3 head (docs/eagle3.md "Prefix caching"). A prefix-cache hit skips the target's rows for
// the cached prefix, and with them their taps: a head restarted at the first computed position
// drafts without the prefix's context (on the bundled model its accepted tokens per verify step
// fell from 1.5 on a cold request to 0.1-0.6 on the same requests served again). A block is keyed
// by a hash of every token up to its end, so a key names one exact prefix; a collision (64 bits)
// could only hand the head wrong context, which costs acceptance, never output (the drafts are
// verified). Least recently used blocks go first past `max_bytes`. Thread-safe.
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

namespace minimax {

class TapStore {
 public:
  // What a server's store may hold (the engine's; the memory plan counts it).
  static constexpr int64_t kServerBytes = int64_t{256} << 20;

  // `width`: floats per position (Eagle3Head::tap_width); `block_tokens`: positions per block
  // (the engine's KV block, so a prefix-cache hit ends on a block boundary).
  TapStore(int64_t width, int64_t block_tokens, int64_t max_bytes);

  // The key of a block given the key of the block before it (0 for the first) and its tokens.
  static uint64_t chain(uint64_t previous, std::span<const int32_t> block_tokens);

  // Keeps `rows` (block_tokens × width floats) as block `key`; a key already held is kept as is.
  void put(uint64_t key, std::span<const float> rows);
  // Copies block `key`'s rows into `out` (resized) and marks it recently used; false when absent.
  bool get(uint64_t key, std::vector<float>& out);

  int64_t width() const { return width_; }
  int64_t block_tokens() const { return block_tokens_; }
  int64_t blocks() const;

 private:
  struct Entry {
    std::vector<float> rows;
    std::list<uint64_t>::iterator age;  // position in recent_
  };
  const int64_t width_, block_tokens_, max_blocks_;
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, Entry> entries_;
  std::list<uint64_t> recent_;  // most recently used first
};

}  // namespace minimax
