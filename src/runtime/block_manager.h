// Ownership of the KV pool's blocks: a free list, a reference count per block, and prefix
// caching. A full block is known by a hash chained over (parent block's hash, its block_size
// token ids), so equal prompt prefixes map to the same physical blocks. A cached block whose last
// reference goes away stays findable in an LRU (vLLM's evictor) until a new allocation needs
// it; fresh blocks come from the free list first.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace minimax {

class BlockManager {
 public:
  BlockManager(int64_t num_blocks, int64_t block_size, bool prefix_caching);

  int64_t num_blocks() const { return static_cast<int64_t>(blocks_.size()); }
  int64_t block_size() const { return block_size_; }
  bool prefix_caching() const { return prefix_caching_; }
  // Blocks that allocate() can hand out: never used or released without a hash, plus cached
  // blocks nobody holds.
  int64_t num_free() const { return free_count_ + cached_free_count_; }
  // Blocks with a reference count above 0.
  int64_t num_used() const { return num_blocks() - num_free(); }
  int32_t ref_count(int32_t block) const;
  bool is_cached(int32_t block) const;  // holds a registered hash

  // A block with reference count 1, from the free list, else by evicting the least recently
  // released cached block (its hash is forgotten). nullopt when every block is held.
  std::optional<int32_t> allocate();
  // Adds a reference (a cached block nobody held leaves the evictor).
  void retain(int32_t block);
  // Drops a reference. At 0 a cached block enters the evictor as its most recent entry, any
  // other block returns to the free list. Error when the count is already 0.
  void release(int32_t block);
  // Releases a sequence's blocks last to first, so that the evictor gives up a sequence's tail
  // before its head (heads are the prefixes other requests share).
  void release_all(std::span<const int32_t> blocks);

  // The hash of a full block of `tokens` after the block whose hash is `parent` (0 for the
  // first block of a sequence).
  static uint64_t chain_hash(uint64_t parent, std::span<const int32_t> tokens);

  // Records that `block`, held by the caller, now holds the KV of the full block `tokens` whose
  // chain hash is `hash`. If another block already holds that content the call does nothing
  // (the first one stays the shared copy). No-op without prefix caching.
  void register_full(int32_t block, uint64_t hash, uint64_t parent,
                     std::span<const int32_t> tokens);

  // The longest chain of cached full blocks that spells the start of `tokens`, limited to
  // `max_tokens` tokens (whole blocks only). Read-only: the caller retains what it takes.
  std::vector<int32_t> match_prefix(std::span<const int32_t> tokens, int64_t max_tokens) const;
  // How many of `blocks` sit in the evictor (taking them uses up free blocks).
  int64_t count_evictable(std::span<const int32_t> blocks) const;

 private:
  struct Block {
    int32_t refs = 0;
    bool hashed = false;
    uint64_t hash = 0, parent = 0;
    std::vector<int32_t> tokens;  // the content, compared on lookup (no trust in 64-bit hashes)
    // Links of the intrusive list the block sits in while refs == 0 (free list or evictor).
    int32_t prev = -1, next = -1;
  };
  struct List {
    int32_t head = -1, tail = -1;
  };
  void push_back(List& list, int32_t block);
  void unlink(List& list, int32_t block);
  int32_t pop_front(List& list);
  void check_block(int32_t block, const char* what) const;
  void forget_hash(int32_t block);
  std::optional<int32_t> lookup(uint64_t hash, uint64_t parent,
                                std::span<const int32_t> tokens) const;

  int64_t block_size_;
  bool prefix_caching_;
  std::vector<Block> blocks_;
  List free_, evictor_;  // evictor: front = least recently released
  int64_t free_count_ = 0, cached_free_count_ = 0;
  std::unordered_map<uint64_t, int32_t> by_hash_;
};

}  // namespace minimax
