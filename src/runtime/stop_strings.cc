// Stop-string matching over streamed text (runtime/stop_strings.h).
#include "runtime/stop_strings.h"

#include <algorithm>

#include "base/error.h"
#include "text/utf8.h"

namespace minimax {

size_t partial_match_length(std::string_view text, std::string_view needle) {
  const size_t longest = std::min(text.size(), needle.empty() ? 0 : needle.size() - 1);
  for (size_t n = longest; n > 0; --n)
    if (text.substr(text.size() - n) == needle.substr(0, n)) return n;
  return 0;
}

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  for (size_t i = 0; i < stops_.size(); ++i) {
    size_t bad = 0;
    if (stops_[i].empty()) fail("stop: string {} is empty", i);
    // Valid UTF-8 also guarantees that a held-back partial match starts on a character boundary.
    if (!utf8::is_valid(stops_[i], &bad))
      fail("stop: string {} is not valid UTF-8 (byte {})", i, bad);
  }
}

StopStringMatcher::Step StopStringMatcher::push(std::string_view piece) {
  Step step;
  if (stopped_) return step;
  held_.append(piece);
  // The earliest stop string wins; at the same position the one listed first.
  size_t first = std::string::npos;
  const std::string* matched = nullptr;
  for (const std::string& stop : stops_) {
    const size_t at = held_.find(stop);
    if (at < first) {
      first = at;
      matched = &stop;
    }
  }
  if (matched) {
    step.text = held_.substr(0, first);
    step.stopped = stopped_ = true;
    step.matched = *matched;
    held_.clear();
    return step;
  }
  size_t hold = 0;
  for (const std::string& stop : stops_) hold = std::max(hold, partial_match_length(held_, stop));
  step.text = held_.substr(0, held_.size() - hold);
  held_.erase(0, held_.size() - hold);
  return step;
}

std::string StopStringMatcher::flush() {
  std::string rest;
  rest.swap(held_);
  return stopped_ ? std::string() : rest;
}

}  // namespace minimax
