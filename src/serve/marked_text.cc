// Marker lexing and rendering (serve/marked_text.h).
#include "serve/marked_text.h"

#include "base/error.h"

namespace minimax {
namespace {

// Bytes that would read as markers cannot come from valid UTF-8; replace them so they never do.
void append_plain(std::string& out, std::string_view text) {
  for (char c : text) {
    if (is_marker_byte(c))
      out += "\xEF\xBF\xBD";
    else
      out += c;
  }
}

}  // namespace

void append_rendered(std::string& out, std::string_view marked,
                     const std::vector<std::string>& markers) {
  for (char c : marked) {
    const int k = marker_number(c);
    if (k < 0)
      out += c;
    else if (k < static_cast<int>(markers.size()))
      out += markers[k];
    else
      out += "\xEF\xBF\xBD";
  }
}

std::string render_marked(std::string_view marked, const std::vector<std::string>& markers) {
  std::string out;
  out.reserve(marked.size());
  append_rendered(out, marked, markers);
  return out;
}

MarkerLexer::MarkerLexer(std::vector<std::string> markers) : markers_(std::move(markers)) {
  if (markers_.size() > static_cast<size_t>(kMaxMarkers))
    fail("marker lexer: {} markers, at most {} are supported", markers_.size(), kMaxMarkers);
  for (const std::string& m : markers_)
    if (m.empty()) fail("marker lexer: empty marker string");
}

MarkerLexer MarkerLexer::for_tokens(std::vector<std::string> markers,
                                    const BpeTokenizer& tokenizer) {
  MarkerLexer lexer(std::move(markers));
  lexer.token_level_ = true;
  for (size_t k = 0; k < lexer.markers_.size(); ++k) {
    const std::optional<int32_t> id = tokenizer.token_id(lexer.markers_[k]);
    if (!id)
      fail("{}: marker '{}' is not a single token, so it cannot be detected by token id",
           tokenizer.source(), lexer.markers_[k]);
    lexer.marker_of_id_[*id] = static_cast<int>(k);
  }
  return lexer;
}

std::string MarkerLexer::lex_held(bool final) {
  std::string out;
  size_t emitted = 0, i = 0;
  while (i < held_.size()) {
    int found = -1;
    bool partial = false;
    for (size_t k = 0; k < markers_.size(); ++k) {
      const std::string& m = markers_[k];
      const std::string_view rest = std::string_view(held_).substr(i);
      if (rest.starts_with(m)) {
        found = static_cast<int>(k);
        break;
      }
      if (!final && rest.size() < m.size() && std::string_view(m).starts_with(rest)) partial = true;
    }
    if (found >= 0) {
      append_plain(out, std::string_view(held_).substr(emitted, i - emitted));
      out += marker_byte(found);
      i += markers_[found].size();
      emitted = i;
    } else if (partial) {
      break;  // the rest may still become a marker: hold it
    } else {
      ++i;
    }
  }
  append_plain(out, std::string_view(held_).substr(emitted, i - emitted));
  held_.erase(0, i);
  return out;
}

std::string MarkerLexer::push_text(std::string_view text) {
  if (token_level_) {
    std::string out;
    append_plain(out, text);
    return out;
  }
  held_.append(text);
  return lex_held(false);
}

std::string MarkerLexer::push_token(int32_t id, std::string_view text) {
  if (!token_level_) return push_text(text);
  auto it = marker_of_id_.find(id);
  if (it == marker_of_id_.end()) return push_text(text);
  // The detokenizer may put text before the marker (an incomplete character it had to give up);
  // with special tokens skipped it gives nothing for the marker itself.
  const std::string& m = markers_[it->second];
  if (text.ends_with(m)) text.remove_suffix(m.size());
  std::string out;
  append_plain(out, text);
  out += marker_byte(it->second);
  return out;
}

std::string MarkerLexer::finish() {
  std::string out = lex_held(true);
  held_.clear();
  return out;
}

}  // namespace minimax
