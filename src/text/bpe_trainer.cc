// Byte-level BPE training with incremental pair counts and a lazy max-heap of pairs.
#include "text/bpe_trainer.h"

#include <algorithm>
#include <map>
#include <optional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "base/error.h"
#include "text/added_tokens.h"
#include "text/byte_level.h"
#include "text/pre_tokenizer.h"
#include "text/utf8.h"

namespace minimax {
namespace {

using nlohmann::json;

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}
int32_t pair_left(uint64_t key) { return static_cast<int32_t>(key >> 32); }
int32_t pair_right(uint64_t key) { return static_cast<int32_t>(key & 0xFFFFFFFFu); }

struct Word {
  std::vector<int32_t> symbols;
  int64_t frequency;
};

// Counts the o200k pre-tokenized words of all texts, with special tokens cut out.
std::map<std::string, int64_t> count_words(const std::vector<std::string>& texts,
                                           const std::vector<std::string>& special_tokens) {
  static const Regex o200k(kO200kPattern, "train_byte_level_bpe: o200k pattern");
  std::vector<AddedToken> specials;
  for (const std::string& s : special_tokens) specials.push_back({s, 0, true});
  const AddedTokenMatcher matcher(std::move(specials));
  std::map<std::string, int64_t> counts;
  for (size_t i = 0; i < texts.size(); ++i) {
    size_t bad = 0;
    if (!utf8::is_valid(texts[i], &bad)) {
      fail("train_byte_level_bpe: texts[{}] is not valid UTF-8 (bad byte at offset {})", i, bad);
    }
    std::vector<TextSegment> segments;
    matcher.split(texts[i], 0, true, &segments);
    for (const TextSegment& s : segments) {
      if (s.id >= 0) continue;
      const std::string_view stretch = std::string_view(texts[i]).substr(s.begin, s.end - s.begin);
      for (const std::string& word :
           split_by_regex(stretch, o200k, SplitBehavior::kIsolated, false)) {
        ++counts[word];
      }
    }
  }
  return counts;
}

class Trainer {
 public:
  explicit Trainer(const std::map<std::string, int64_t>& word_counts) {
    for (int b = 0; b < 256; ++b) add_token(std::string(1, static_cast<char>(b)));
    for (const auto& [text, frequency] : word_counts) {
      Word word{{}, frequency};
      for (char c : text) word.symbols.push_back(static_cast<unsigned char>(c));
      words_.push_back(std::move(word));
    }
    for (uint32_t w = 0; w < words_.size(); ++w) add_pairs(w);
    for (const auto& [key, count] : pair_counts_) queue_.push({count, key});
  }

  // Merges the best pair until the vocabulary has `vocab_size` tokens or nothing is left.
  void run(size_t vocab_size) {
    while (token_bytes_.size() < vocab_size) {
      const auto best = pop_best();
      if (!best) break;
      merge(*best);
    }
  }

  const std::vector<std::string>& token_bytes() const { return token_bytes_; }
  const std::vector<std::pair<int32_t, int32_t>>& merges() const { return merges_; }

 private:
  struct Entry {
    int64_t count;
    uint64_t key;
    // Max-heap on count; among equal counts the smallest (left, right) ids come out first.
    bool operator<(const Entry& other) const {
      if (count != other.count) return count < other.count;
      return key > other.key;
    }
  };

  int32_t add_token(const std::string& bytes) {
    const auto [it, inserted] =
        id_by_bytes_.emplace(bytes, static_cast<int32_t>(token_bytes_.size()));
    if (inserted) token_bytes_.push_back(bytes);
    return it->second;
  }

  void add_pairs(uint32_t w) {
    const Word& word = words_[w];
    for (size_t i = 0; i + 1 < word.symbols.size(); ++i) {
      const uint64_t key = pair_key(word.symbols[i], word.symbols[i + 1]);
      pair_counts_[key] += word.frequency;
      words_with_pair_[key].push_back(w);
      changed_.insert(key);
    }
  }

  void remove_pairs(uint32_t w) {
    const Word& word = words_[w];
    for (size_t i = 0; i + 1 < word.symbols.size(); ++i) {
      const uint64_t key = pair_key(word.symbols[i], word.symbols[i + 1]);
      pair_counts_[key] -= word.frequency;
      changed_.insert(key);
    }
  }

  std::optional<uint64_t> pop_best() {
    while (!queue_.empty()) {
      const Entry top = queue_.top();
      queue_.pop();
      const auto it = pair_counts_.find(top.key);
      // Entries go stale when counts change; the current count was pushed separately.
      if (it != pair_counts_.end() && it->second == top.count && top.count > 0) return top.key;
    }
    return std::nullopt;
  }

  void merge(uint64_t key) {
    const int32_t left = pair_left(key);
    const int32_t right = pair_right(key);
    const int32_t merged = add_token(token_bytes_[left] + token_bytes_[right]);
    merges_.emplace_back(left, right);
    std::vector<uint32_t> affected = std::move(words_with_pair_[key]);
    words_with_pair_.erase(key);
    std::sort(affected.begin(), affected.end());
    affected.erase(std::unique(affected.begin(), affected.end()), affected.end());
    changed_.clear();
    for (uint32_t w : affected) {
      std::vector<int32_t>& symbols = words_[w].symbols;
      bool present = false;
      for (size_t i = 0; i + 1 < symbols.size() && !present; ++i) {
        present = symbols[i] == left && symbols[i + 1] == right;
      }
      if (!present) continue;
      remove_pairs(w);
      std::vector<int32_t> next;
      next.reserve(symbols.size());
      for (size_t i = 0; i < symbols.size(); ++i) {
        if (i + 1 < symbols.size() && symbols[i] == left && symbols[i + 1] == right) {
          next.push_back(merged);
          ++i;
        } else {
          next.push_back(symbols[i]);
        }
      }
      symbols = std::move(next);
      add_pairs(w);
    }
    for (uint64_t changed : changed_) {
      const int64_t count = pair_counts_[changed];
      if (count > 0) queue_.push({count, changed});
    }
  }

  std::vector<Word> words_;
  std::vector<std::string> token_bytes_;
  std::unordered_map<std::string, int32_t> id_by_bytes_;
  std::vector<std::pair<int32_t, int32_t>> merges_;
  std::unordered_map<uint64_t, int64_t> pair_counts_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> words_with_pair_;
  std::unordered_set<uint64_t> changed_;
  std::priority_queue<Entry> queue_;
};

json tokenizer_json(const std::vector<std::string>& token_bytes,
                    const std::vector<std::pair<int32_t, int32_t>>& merges,
                    const std::vector<std::string>& special_tokens) {
  std::vector<std::string> tokens;
  tokens.reserve(token_bytes.size());
  json vocab = json::object();
  for (size_t id = 0; id < token_bytes.size(); ++id) {
    tokens.push_back(to_byte_level(token_bytes[id]));
    vocab[tokens.back()] = id;
  }
  json merge_list = json::array();
  for (const auto& [left, right] : merges) merge_list.push_back({tokens[left], tokens[right]});
  json added = json::array();
  int32_t next_id = static_cast<int32_t>(tokens.size());
  for (const std::string& special : special_tokens) {
    const auto existing = vocab.find(special);
    const int32_t id = existing != vocab.end() ? existing->get<int32_t>() : next_id++;
    added.push_back({{"id", id},
                     {"content", special},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  }
  json split = {{"type", "Split"},
                {"pattern", {{"Regex", std::string(kO200kPattern)}}},
                {"behavior", "Isolated"},
                {"invert", false}};
  json byte_level = {{"type", "ByteLevel"},
                     {"add_prefix_space", false},
                     {"trim_offsets", true},
                     {"use_regex", false}};
  return {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", {split, byte_level}}}},
      {"post_processor", nullptr},
      {"decoder",
       {{"type", "ByteLevel"},
        {"add_prefix_space", true},
        {"trim_offsets", true},
        {"use_regex", true}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"ignore_merges", false},
        {"vocab", vocab},
        {"merges", merge_list}}},
  };
}

}  // namespace

json train_byte_level_bpe(const std::vector<std::string>& texts, int vocab_size,
                          const std::vector<std::string>& special_tokens) {
  if (vocab_size < 256) {
    fail("train_byte_level_bpe: vocab_size {} is below the 256 byte tokens", vocab_size);
  }
  for (size_t i = 0; i < special_tokens.size(); ++i) {
    if (special_tokens[i].empty()) fail("train_byte_level_bpe: special_tokens[{}] is empty", i);
    if (!utf8::is_valid(special_tokens[i])) {
      fail("train_byte_level_bpe: special_tokens[{}] is not valid UTF-8", i);
    }
    for (size_t j = 0; j < i; ++j) {
      if (special_tokens[j] == special_tokens[i]) {
        fail("train_byte_level_bpe: special_tokens[{}] repeats '{}'", i, special_tokens[i]);
      }
    }
  }
  Trainer trainer(count_words(texts, special_tokens));
  trainer.run(static_cast<size_t>(vocab_size));
  return tokenizer_json(trainer.token_bytes(), trainer.merges(), special_tokens);
}

const std::vector<std::string>& minimax_special_tokens() {
  static const std::vector<std::string> tokens = {
      "]!p~[",
      "]~b]",
      "[e~[",
      "]!d~[",
      "]~!b[",
      "<think>",
      "</think>",
      "<minimax:tool_call>",
      "</minimax:tool_call>",
      "<mm:think>",
      "</mm:think>",
      "]<]minimax[>[",
      "]<]start of image[>[",
      "]<]end of image[>[",
      "]<]vision pad[>[",
  };
  return tokens;
}

}  // namespace minimax
