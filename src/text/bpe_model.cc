// BPE merge loop: a min-heap of (rank, position) over a linked list of symbols.
#include "text/bpe_model.h"

#include <queue>

#include "base/error.h"
#include "text/utf8.h"

namespace minimax {

BpeModel::BpeModel(TokenIdMap vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                   BpeOptions options, const std::string& where)
    : vocab_(std::move(vocab)), options_(options) {
  merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const auto left_it = vocab_.find(left);
    const auto right_it = vocab_.find(right);
    const auto merged_it = vocab_.find(left + right);
    if (left_it == vocab_.end())
      fail("{}[{}]: token '{}' is not in model.vocab", where, rank, left);
    if (right_it == vocab_.end()) {
      fail("{}[{}]: token '{}' is not in model.vocab", where, rank, right);
    }
    if (merged_it == vocab_.end()) {
      fail("{}[{}]: merged token '{}{}' is not in model.vocab", where, rank, left, right);
    }
    // A repeated pair keeps its last rank, as a map built from the list does in Hugging Face.
    merges_[pair_key(left_it->second, right_it->second)] = {static_cast<int32_t>(rank),
                                                            merged_it->second};
  }
}

std::optional<int32_t> BpeModel::token_id(std::string_view token) const {
  const auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

void BpeModel::initial_symbols(std::string_view word, std::vector<int32_t>* ids) const {
  bool previous_unknown = false;
  size_t pos = 0;
  while (pos < word.size()) {
    const size_t length = utf8::scan(word, pos).length;
    const std::string_view character = word.substr(pos, length);
    pos += length;
    if (const auto it = vocab_.find(character); it != vocab_.end()) {
      ids->push_back(it->second);
      previous_unknown = false;
      continue;
    }
    if (options_.byte_fallback) {
      std::vector<int32_t> bytes;
      for (char c : character) {
        const auto it = vocab_.find(fmt::format("<0x{:02X}>", static_cast<unsigned char>(c)));
        if (it == vocab_.end()) break;
        bytes.push_back(it->second);
      }
      if (bytes.size() == character.size()) {
        ids->insert(ids->end(), bytes.begin(), bytes.end());
        previous_unknown = false;
        continue;
      }
    }
    // Without an unk token Hugging Face drops the character; so do we.
    if (options_.unk_id && !(options_.fuse_unk && previous_unknown)) {
      ids->push_back(*options_.unk_id);
    }
    previous_unknown = true;
  }
}

void BpeModel::apply_merges(std::vector<int32_t>* ids) const {
  const int n = static_cast<int>(ids->size());
  if (n < 2) return;
  struct Symbol {
    int32_t id;
    int prev;
    int next;
    bool alive;
  };
  std::vector<Symbol> symbols(n);
  for (int i = 0; i < n; ++i) symbols[i] = {(*ids)[i], i - 1, i + 1 < n ? i + 1 : -1, true};

  struct Candidate {
    int32_t rank;
    int pos;
    int32_t new_id;
    // Lowest rank first, then leftmost: the order Hugging Face's BPE pops merges in.
    bool operator<(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : pos > other.pos;
    }
  };
  std::priority_queue<Candidate> queue;
  auto push_pair = [&](int left) {
    if (left < 0 || symbols[left].next < 0) return;
    const auto it = merges_.find(pair_key(symbols[left].id, symbols[symbols[left].next].id));
    if (it != merges_.end()) queue.push({it->second.rank, left, it->second.new_id});
  };
  for (int i = 0; i + 1 < n; ++i) push_pair(i);

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    // The entry is stale if either side changed since it was pushed.
    const auto it = merges_.find(pair_key(left.id, symbols[left.next].id));
    if (it == merges_.end() || it->second.rank != top.rank || it->second.new_id != top.new_id) {
      continue;
    }
    Symbol& right = symbols[left.next];
    left.id = top.new_id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.pos;
    push_pair(left.prev);
    push_pair(top.pos);
  }
  ids->clear();
  for (int i = 0; i >= 0; i = symbols[i].next) ids->push_back(symbols[i].id);
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>* out) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    if (const auto it = vocab_.find(word); it != vocab_.end()) {
      out->push_back(it->second);
      return;
    }
  }
  const bool cacheable = word.size() < kMaxCachedWordBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (const auto it = cache_.find(word); it != cache_.end()) {
      out->insert(out->end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> ids;
  ids.reserve(word.size());
  initial_symbols(word, &ids);
  apply_merges(&ids);
  out->insert(out->end(), ids.begin(), ids.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cache_.size() >= kCacheCapacity) cache_.clear();
    cache_.emplace(std::string(word), std::move(ids));
  }
}

}  // namespace minimax
