// The BPE model of a tokenizer.json: vocabulary, merge ranks, and the merge loop that turns one
// pre-tokenized word into token ids (lowest merge rank first, leftmost among equals, as Hugging
// Face's BPE does). Results per word are cached, so repeated words in long texts cost one lookup.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace minimax {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenIdMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

struct BpeOptions {
  bool ignore_merges = false;     // a word that is itself in the vocabulary is one token
  std::optional<int32_t> unk_id;  // characters missing from the vocabulary become this token
  bool fuse_unk = false;          // consecutive unknown characters share one unk token
  bool byte_fallback = false;     // unknown characters become <0xXX> byte tokens when present
};

class BpeModel {
 public:
  // `merges` are token pairs in rank order. `where` names the file and field for errors.
  BpeModel(TokenIdMap vocab, const std::vector<std::pair<std::string, std::string>>& merges,
           BpeOptions options, const std::string& where);
  BpeModel(const BpeModel&) = delete;
  BpeModel& operator=(const BpeModel&) = delete;

  // Appends the ids of `word` (one pre-tokenized word, in the vocabulary's alphabet).
  void encode_word(std::string_view word, std::vector<int32_t>* out) const;

  std::optional<int32_t> token_id(std::string_view token) const;
  const TokenIdMap& vocab() const { return vocab_; }
  size_t merge_count() const { return merges_.size(); }

 private:
  struct Merge {
    int32_t rank;
    int32_t new_id;
  };
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }

  // Splits `word` into its characters' ids (unknown characters handled per the options).
  void initial_symbols(std::string_view word, std::vector<int32_t>* ids) const;
  // Applies the merges to `ids` in place.
  void apply_merges(std::vector<int32_t>* ids) const;

  TokenIdMap vocab_;
  std::unordered_map<uint64_t, Merge> merges_;
  BpeOptions options_;

  static constexpr size_t kCacheCapacity = 16384;
  static constexpr size_t kMaxCachedWordBytes = 256;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace minimax
