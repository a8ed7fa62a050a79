// Streaming reasoning/answer split at think markers (runtime/reasoning_split.h).
#include "runtime/reasoning_split.h"

#include <algorithm>

#include "runtime/stop_strings.h"

namespace minimax {

bool prompt_opens_reasoning(std::string_view prompt, const ThinkMarkers& markers) {
  const size_t end = prompt.find_last_not_of(" \t\r\n");
  if (end == std::string_view::npos) return false;
  return prompt.substr(0, end + 1).ends_with(markers.open);
}

ReasoningSplitter::ReasoningSplitter(ThinkMarkers markers, bool start_in_reasoning)
    : markers_(std::move(markers)), reasoning_(start_in_reasoning) {}

void ReasoningSplitter::emit(std::vector<Piece>& out, std::string_view text) const {
  if (text.empty()) return;
  if (!out.empty() && out.back().reasoning == reasoning_)
    out.back().text.append(text);
  else
    out.push_back({reasoning_, std::string(text)});
}

std::vector<ReasoningSplitter::Piece> ReasoningSplitter::push(std::string_view chunk) {
  std::vector<Piece> out;
  held_.append(chunk);
  size_t begin = 0;
  while (true) {
    const std::string_view rest = std::string_view(held_).substr(begin);
    const size_t open = rest.find(markers_.open), close = rest.find(markers_.close);
    if (open == std::string_view::npos && close == std::string_view::npos) break;
    // Whichever marker comes first switches the state (the open marker is not a prefix of the
    // close one, so they cannot start at the same byte).
    const bool opens = open < close;
    const size_t at = opens ? open : close;
    emit(out, rest.substr(0, at));
    reasoning_ = opens;
    begin += at + (opens ? markers_.open.size() : markers_.close.size());
  }
  const std::string_view rest = std::string_view(held_).substr(begin);
  const size_t hold = std::max(partial_match_length(rest, markers_.open),
                               partial_match_length(rest, markers_.close));
  emit(out, rest.substr(0, rest.size() - hold));
  held_ = std::string(rest.substr(rest.size() - hold));
  return out;
}

std::vector<ReasoningSplitter::Piece> ReasoningSplitter::flush() {
  std::vector<Piece> out;
  emit(out, held_);
  held_.clear();
  return out;
}

}  // namespace minimax
