// Stop strings over streamed text: text is released as soon as it can no longer be the start of a
// stop string, a stop string spanning several pieces is still found, and neither it nor anything
// after it is released.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace minimax {

// Length of the longest suffix of `text` that is a proper prefix of `needle` (0 if none): the
// bytes that must be held back while `needle` may still be completing.
size_t partial_match_length(std::string_view text, std::string_view needle);

class StopStringMatcher {
 public:
  // Error naming "stop" when a string is empty or not valid UTF-8.
  explicit StopStringMatcher(std::vector<std::string> stops);

  struct Step {
    std::string text;      // safe to show now
    bool stopped = false;  // a stop string was completed; `text` ends right before it
    std::string matched;   // that stop string
  };
  // Adds the next piece of text (whole UTF-8 characters). After a stop, further pieces are ignored.
  Step push(std::string_view piece);
  // The text still held back (a partial stop string at the very end of the output).
  std::string flush();

  bool stopped() const { return stopped_; }
  const std::vector<std::string>& stops() const { return stops_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace minimax
