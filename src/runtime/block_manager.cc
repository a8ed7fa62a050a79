// KV block ownership, reference counts and prefix caching (runtime/block_manager.h).
#include "runtime/block_manager.h"

#include <algorithm>

#include "base/error.h"

namespace minimax {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64's finalizer: every input bit moves every output bit
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

BlockManager::BlockManager(int64_t num_blocks, int64_t block_size, bool prefix_caching)
    : block_size_(block_size), prefix_caching_(prefix_caching) {
  if (num_blocks <= 0) fail("kv_cache_blocks: must be > 0, got {}", num_blocks);
  if (num_blocks > INT32_MAX) fail("kv_cache_blocks: {} is too many", num_blocks);
  if (block_size <= 0) fail("kv_block_size: must be > 0, got {}", block_size);
  blocks_.resize(num_blocks);
  for (int32_t b = 0; b < num_blocks; ++b) push_back(free_, b);
  free_count_ = num_blocks;
}

void BlockManager::check_block(int32_t block, const char* what) const {
  if (block < 0 || block >= num_blocks())
    fail("{}: block {} outside the pool of {} blocks", what, block, num_blocks());
}

int32_t BlockManager::ref_count(int32_t block) const {
  check_block(block, "ref_count");
  return blocks_[block].refs;
}

bool BlockManager::is_cached(int32_t block) const {
  check_block(block, "is_cached");
  return blocks_[block].hashed;
}

void BlockManager::push_back(List& list, int32_t block) {
  Block& b = blocks_[block];
  b.prev = list.tail;
  b.next = -1;
  if (list.tail >= 0) {
    blocks_[list.tail].next = block;
  } else {
    list.head = block;
  }
  list.tail = block;
}

void BlockManager::unlink(List& list, int32_t block) {
  Block& b = blocks_[block];
  if (b.prev >= 0) {
    blocks_[b.prev].next = b.next;
  } else {
    list.head = b.next;
  }
  if (b.next >= 0) {
    blocks_[b.next].prev = b.prev;
  } else {
    list.tail = b.prev;
  }
  b.prev = b.next = -1;
}

int32_t BlockManager::pop_front(List& list) {
  const int32_t block = list.head;
  if (block >= 0) unlink(list, block);
  return block;
}

void BlockManager::forget_hash(int32_t block) {
  Block& b = blocks_[block];
  if (!b.hashed) return;
  if (auto it = by_hash_.find(b.hash); it != by_hash_.end() && it->second == block)
    by_hash_.erase(it);
  b.hashed = false;
  b.tokens.clear();
}

std::optional<int32_t> BlockManager::allocate() {
  int32_t block = pop_front(free_);
  if (block >= 0) {
    --free_count_;
  } else {
    block = pop_front(evictor_);
    if (block < 0) return std::nullopt;
    --cached_free_count_;
    forget_hash(block);
  }
  blocks_[block].refs = 1;
  return block;
}

void BlockManager::retain(int32_t block) {
  check_block(block, "retain");
  Block& b = blocks_[block];
  if (b.refs == 0) {
    // Only cached blocks are ever retained from refcount 0 (a prefix hit); a free-list block
    // would be handed out by allocate() instead.
    if (!b.hashed) fail("retain: block {} is free and holds no cached content", block);
    unlink(evictor_, block);
    --cached_free_count_;
  }
  ++b.refs;
}

void BlockManager::release(int32_t block) {
  check_block(block, "release");
  Block& b = blocks_[block];
  if (b.refs <= 0) fail("release: block {} is not held", block);
  if (--b.refs > 0) return;
  if (b.hashed) {
    push_back(evictor_, block);
    ++cached_free_count_;
  } else {
    push_back(free_, block);
    ++free_count_;
  }
}

void BlockManager::release_all(std::span<const int32_t> blocks) {
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) release(*it);
}

uint64_t BlockManager::chain_hash(uint64_t parent, std::span<const int32_t> tokens) {
  uint64_t h = mix(parent ^ 0x6B76626C6F636B31ull);  // "kvblock1": first blocks differ from 0
  for (int32_t token : tokens) h = mix(h ^ static_cast<uint32_t>(token));
  return mix(h ^ tokens.size());
}

std::optional<int32_t> BlockManager::lookup(uint64_t hash, uint64_t parent,
                                            std::span<const int32_t> tokens) const {
  const auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return std::nullopt;
  const Block& b = blocks_[it->second];
  if (b.parent != parent ||
      !std::equal(b.tokens.begin(), b.tokens.end(), tokens.begin(), tokens.end()))
    return std::nullopt;
  return it->second;
}

void BlockManager::register_full(int32_t block, uint64_t hash, uint64_t parent,
                                 std::span<const int32_t> tokens) {
  if (!prefix_caching_) return;
  check_block(block, "register_full");
  if (static_cast<int64_t>(tokens.size()) != block_size_)
    fail("register_full: block {} given {} tokens, blocks hold {}", block, tokens.size(),
         block_size_);
  Block& b = blocks_[block];
  if (b.refs <= 0) fail("register_full: block {} is not held", block);
  if (b.hashed || by_hash_.contains(hash)) return;
  b.hashed = true;
  b.hash = hash;
  b.parent = parent;
  b.tokens.assign(tokens.begin(), tokens.end());
  by_hash_.emplace(hash, block);
}

std::vector<int32_t> BlockManager::match_prefix(std::span<const int32_t> tokens,
                                                int64_t max_tokens) const {
  std::vector<int32_t> found;
  if (!prefix_caching_) return found;
  const int64_t limit = std::min<int64_t>(max_tokens, static_cast<int64_t>(tokens.size()));
  uint64_t parent = 0;
  for (int64_t begin = 0; begin + block_size_ <= limit; begin += block_size_) {
    const auto block_tokens = tokens.subspan(begin, block_size_);
    const uint64_t hash = chain_hash(parent, block_tokens);
    const std::optional<int32_t> block = lookup(hash, parent, block_tokens);
    if (!block) break;
    found.push_back(*block);
    parent = hash;
  }
  return found;
}

int64_t BlockManager::count_evictable(std::span<const int32_t> blocks) const {
  int64_t n = 0;
  for (int32_t block : blocks) n += blocks_[block].refs == 0 ? 1 : 0;
  return n;
}

}  // namespace minimax
