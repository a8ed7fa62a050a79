// Added-token search, following Hugging Face tokenizers' AddedVocabulary::find_matches.
#include "text/added_tokens.h"

#include <algorithm>

#include "text/utf8.h"

namespace minimax {
namespace {

// Start of the previous character before `pos`.
size_t previous_char_start(std::string_view text, size_t pos) {
  size_t start = pos - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  return start;
}

bool ends_with_word(std::string_view text) {
  return !text.empty() && utf8::is_word_character(utf8::last_code_point(text));
}

bool starts_with_word(std::string_view text) {
  if (text.empty()) return false;
  size_t length = 0;
  return utf8::is_word_character(utf8::decode(text, 0, &length));
}

// Offset where the run of whitespace that ends at `pos` begins.
size_t whitespace_run_start(std::string_view text, size_t pos) {
  while (pos > 0) {
    const size_t start = previous_char_start(text, pos);
    size_t length = 0;
    if (!utf8::is_whitespace(utf8::decode(text, start, &length))) break;
    pos = start;
  }
  return pos;
}

// Offset where the run of whitespace that starts at `pos` ends.
size_t whitespace_run_end(std::string_view text, size_t pos) {
  while (pos < text.size()) {
    size_t length = 0;
    if (!utf8::is_whitespace(utf8::decode(text, pos, &length))) break;
    pos += length;
  }
  return pos;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
  for (uint32_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i].content.empty()) continue;
    by_first_byte_[static_cast<unsigned char>(tokens_[i].content[0])].push_back(i);
  }
  for (auto& list : by_first_byte_) {
    std::stable_sort(list.begin(), list.end(), [this](uint32_t a, uint32_t b) {
      return tokens_[a].content.size() > tokens_[b].content.size();
    });
  }
}

int AddedTokenMatcher::longest_match_at(std::string_view text, size_t pos) const {
  for (uint32_t index : by_first_byte_[static_cast<unsigned char>(text[pos])]) {
    if (text.substr(pos).starts_with(tokens_[index].content)) return static_cast<int>(index);
  }
  return -1;
}

void AddedTokenMatcher::split(std::string_view text, size_t base, bool parse_special,
                              std::vector<TextSegment>* out) const {
  if (tokens_.empty()) {
    if (!text.empty()) out->push_back({base, base + text.size(), -1});
    return;
  }
  size_t covered = 0;  // end of the last segment emitted
  size_t search = 0;   // where the next match may start
  while (search < text.size()) {
    int index = -1;
    size_t start = search;
    for (; start < text.size(); ++start) {
      index = longest_match_at(text, start);
      if (index >= 0) break;
    }
    if (index < 0) break;
    const AddedToken& token = tokens_[index];
    size_t stop = start + token.content.size();
    search = stop;
    if (token.special && !parse_special) continue;
    if (token.single_word) {
      const bool alone_left = start == 0 || !ends_with_word(text.substr(0, start));
      const bool alone_right = stop == text.size() || !starts_with_word(text.substr(stop));
      if (!alone_left || !alone_right) continue;
    }
    if (token.lstrip) start = std::max(whitespace_run_start(text, start), covered);
    if (token.rstrip) stop = whitespace_run_end(text, stop);
    if (covered < start) out->push_back({base + covered, base + start, -1});
    out->push_back({base + start, base + stop, token.id});
    covered = stop;
    search = std::max(search, stop);
  }
  if (covered < text.size()) out->push_back({base + covered, base + text.size(), -1});
}

}  // namespace minimax
