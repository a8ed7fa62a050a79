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
  // Text classes: bit k (k < kAsciiClasses) set when every byte on the edges of node i's subtree
  // (its own included) is in the ASCII set text_classes()[k]; bit kAsciiClasses + k set when,
  // read from node i on, every token of the subtree is text of that set or any multi-byte UTF-8
  // character (well formed; a token may end inside a character). A mask walk takes such a
  // subtree whole when every character of the class leads from the current state back to it
  // (inside a free JSON string), or, inside a counted repetition (a string with maxLength),
  // keeps the tokens with no more characters than the iterations left. One byte per node keeps
  // the walk's memory stream small.
  static constexpr int kAsciiClasses = 4, kTextClasses = 2 * kAsciiClasses;
  uint8_t subtree_classes(size_t i) const { return subtree_classes_[i]; }
  // The characters (bytes that are not UTF-8 continuation bytes) from node i down to the token
  // of its subtree with the most, at most 255.
  uint8_t subtree_chars(size_t i) const { return subtree_chars_[i]; }
  // The characters of each token of subtree_tokens(i), whole, in the same order.
  const uint16_t* subtree_token_chars(size_t i) const {
    return token_chars_.data() + token_begin_[i];
  }
  // The ASCII byte sets of the text classes (bit b of word b / 64): JSON string text (printable,
  // no quote or backslash), M2 value text (printable, \n, \t, no '<'), raw text (printable, \n,
  // \t), and all of ASCII.
  static const std::array<std::array<uint64_t, 2>, kAsciiClasses>& text_classes();
  static bool is_char_start(uint8_t byte) { return (byte & 0xC0) != 0x80; }

 private:
  void build(const std::vector<std::string>& bytes_by_id);

  int32_t vocab_size_ = 0;
  std::vector<uint8_t> byte_;
  std::vector<uint16_t> depth_;
  std::vector<uint32_t> subtree_end_;
  std::vector<uint32_t> token_begin_;  // node_count + 1 offsets into tokens_
  std::vector<uint8_t> subtree_classes_;
  std::vector<uint8_t> subtree_chars_;
  std::vector<int32_t> tokens_;
  std::vector<uint16_t> token_chars_;  // parallel to tokens_
  size_t max_depth_ = 0;
  std::unordered_map<std::string, int32_t> special_;
  std::string bytes_;                  // every ordinary token's bytes, by id
  std::vector<uint32_t> bytes_begin_;  // vocab_size + 1 offsets into bytes_
};

}  // namespace minimax
