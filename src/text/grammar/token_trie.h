// The vocabulary as constrained decoding sees it: the byte strings of the ordinary tokens in a
// trie laid out in preorder (so one walk that skips dead subtrees decides every token that shares
// a prefix at once), and the special and other added tokens by their text (a grammar names such a
// token as a whole, never by its bytes). Built once per tokenizer and shared read-only by every
// request.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/bpe_tokenizer.h"

namespace minimax {

class TokenTrie {
 public:
  // Ordinary tokens are those with non-empty bytes that are neither special nor added tokens.
  explicit TokenTrie(const BpeTokenizer& tokenizer);
  // For tests and benchmarks: token i has bytes tokens[i]; `special` maps text → id.
  TokenTrie(const std::vector<std::string>& tokens,
            const std::unordered_map<std::string, int32_t>& special);

  int32_t vocab_size() const { return vocab_size_; }
  size_t node_count() const { return byte_.size(); }
  std::optional<int32_t> special_token(std::string_view text) const;
  // The bytes of an ordinary token; "" for a special or unused id.
  std::string_view token_bytes(int32_t id) const {
    return std::string_view(bytes_).substr(bytes_begin_[id],
                                           bytes_begin_[id + 1] - bytes_begin_[id]);
  }

  // Node i (preorder): the byte on the edge into it, its depth (1 = a first byte), the index just
  // past its subtree, and the tokens whose bytes end there (node_tokens(i)).
  uint8_t byte(size_t i) const { return byte_[i]; }
  uint16_t depth(size_t i) const { return depth_[i]; }
  uint32_t subtree_end(size_t i) const { return subtree_end_[i]; }
  std::pair<const int32_t*, const int32_t*> node_tokens(size_t i) const {
    return {tokens_.data() + token_begin_[i], tokens_.data() + token_begin_[i + 1]};
  }
  size_t max_depth() const { return max_depth_; }
  // The tokens of node i's whole subtree (node i's own first), a contiguous run.
  std::pair<const int32_t*, const int32_t*> subtree_tokens(size_t i) const {
    return {tokens_.data() + token_begin_[i], tokens_.data() + token_begin_[subtree_end_[i]]};
  }
  // The bytes on the edges of node i's subtree (its own included) when all are ASCII: bit b of
  // word b / 64. Both words all-ones when some byte is not ASCII. A mask walk skips a subtree
  // whose bytes all lead from the current state back to it: every token in it is allowed.
  const std::array<uint64_t, 2>& subtree_ascii(size_t i) const { return subtree_ascii_[i]; }

 private:
  void build(const std::vector<std::string>& bytes_by_id);

  int32_t vocab_size_ = 0;
  std::vector<uint8_t> byte_;
  std::vector<uint16_t> depth_;
  std::vector<uint32_t> subtree_end_;
  std::vector<uint32_t> token_begin_;  // node_count + 1 offsets into tokens_
  std::vector<std::array<uint64_t, 2>> subtree_ascii_;
  std::vector<int32_t> tokens_;
  size_t max_depth_ = 0;
  std::unordered_map<std::string, int32_t> special_;
  std::string bytes_;                  // every ordinary token's bytes, by id
  std::vector<uint32_t> bytes_begin_;  // vocab_size + 1 offsets into bytes_
};

}  // namespace minimax
