// Marked text, the form in which generated text travels between the parsers: UTF-8 in which each
// special-token marker of the format (serve/parser_format.h) is one byte 0xF8 + k, k being the
// marker's number. Those bytes never occur in UTF-8, so downstream a marker can neither be split
// across deltas nor confused with text that merely spells it. MarkerLexer turns model output into
// marked text, at token level (the marker is the token id, which is how the model writes it) or at
// text level (the marker is its spelling, held back while a delta ends in a prefix of it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/bpe_tokenizer.h"

namespace minimax {

inline constexpr unsigned char kFirstMarkerByte = 0xF8;
inline constexpr int kMaxMarkers = 8;

inline char marker_byte(int marker) { return static_cast<char>(kFirstMarkerByte + marker); }
// The marker number of byte `c`, or -1 for an ordinary byte.
inline int marker_number(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte >= kFirstMarkerByte ? byte - kFirstMarkerByte : -1;
}
inline bool is_marker_byte(char c) { return marker_number(c) >= 0; }

// Replaces every marker byte with the marker's string.
std::string render_marked(std::string_view marked, const std::vector<std::string>& markers);
void append_rendered(std::string& out, std::string_view marked,
                     const std::vector<std::string>& markers);

class MarkerLexer {
 public:
  // Text level: markers are found by their spelling.
  explicit MarkerLexer(std::vector<std::string> markers);
  // Token level: markers are found by token id; text is never scanned for them. Throws Error
  // (naming the tokenizer file) when a marker is not a single token of `tokenizer`.
  static MarkerLexer for_tokens(std::vector<std::string> markers, const BpeTokenizer& tokenizer);

  // Text level: the marked text that is certain now (a suffix that may begin a marker is held).
  // Token level: `text` as plain text.
  std::string push_text(std::string_view text);
  // One generated token and the text the detokenizer gave for it (with special tokens kept).
  // At text level the id is ignored.
  std::string push_token(int32_t id, std::string_view text);
  // The held suffix, as plain text, at the end of the stream.
  std::string finish();

  bool token_level() const { return token_level_; }
  const std::vector<std::string>& markers() const { return markers_; }

 private:
  std::string lex_held(bool final);

  std::vector<std::string> markers_;
  bool token_level_ = false;
  std::unordered_map<int32_t, int> marker_of_id_;
  std::string held_;
};

}  // namespace minimax
