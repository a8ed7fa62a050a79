// A compiled PCRE2 pattern in UTF + Unicode-property mode (\p{..}, (?i:..), lookahead), used by the
// pre-tokenizer splits. Thread-safe: one compiled pattern, match data allocated per call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct pcre2_real_code_8;

namespace minimax {

class Regex {
 public:
  // Compiles `pattern`; a bad pattern throws Error naming `what` (the file and field it came from).
  Regex(std::string_view pattern, std::string what);

  // Byte spans [begin, end) of the successive non-overlapping matches in `text`, which must be
  // valid UTF-8. Empty matches are dropped (the search moves on by one character).
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;

  // True if the pattern matches the whole of `text`.
  bool matches_whole(std::string_view text) const;

  const std::string& pattern() const { return pattern_; }

 private:
  // Runs one match from `offset`; returns false when there is none.
  bool match_from(std::string_view text, size_t offset, uint32_t options, size_t* begin,
                  size_t* end) const;

  std::string pattern_;
  std::string what_;
  std::shared_ptr<pcre2_real_code_8> code_;
};

// Escapes `literal` so that it matches itself (for Split patterns given as {"String": ...}).
std::string regex_escape(std::string_view literal);

}  // namespace minimax
