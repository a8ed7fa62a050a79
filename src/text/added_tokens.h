// Added tokens (the "added_tokens" of tokenizer.json: specials such as "[e~[" and "<think>") and
// the search that splits them out of the text before pre-tokenization, with Hugging Face's rules:
// leftmost-longest match, single_word, lstrip/rstrip, and special tokens left as text on request.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace minimax {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
};

// One stretch of the input: either plain text (id < 0) or an added token (possibly with the
// whitespace that its lstrip/rstrip flags absorbed).
struct TextSegment {
  size_t begin = 0;
  size_t end = 0;
  int32_t id = -1;
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  // Appends the segments of `text` (offsets shifted by `base`), covering all of it. When
  // `parse_special` is false, special tokens are not matched and stay plain text.
  void split(std::string_view text, size_t base, bool parse_special,
             std::vector<TextSegment>* out) const;

  bool empty() const { return tokens_.empty(); }

 private:
  // Index of the longest token that starts at `pos`, or -1.
  int longest_match_at(std::string_view text, size_t pos) const;

  std::vector<AddedToken> tokens_;
  // Token indices by first byte, longest first, so the first hit at a position is the longest.
  std::array<std::vector<uint32_t>, 256> by_first_byte_;
};

}  // namespace minimax
