// A simple streaming split of generated text into reasoning and answer at the model's think
// markers (runtime/checkpoint_text.h): an open marker starts reasoning, a close marker ends it,
// and the markers themselves are dropped. A marker split across pieces is still recognised
// (a possible partial marker is held back). The full reasoning parser, with its per-model
// rules (spec/parsers.md §2), belongs to the server.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/checkpoint_text.h"

namespace minimax {

// True when the rendered prompt leaves the model inside reasoning: it ends with the open marker,
// possibly followed by whitespace (M2's generation prompt ends "<think>\n").
bool prompt_opens_reasoning(std::string_view prompt, const ThinkMarkers& markers);

class ReasoningSplitter {
 public:
  ReasoningSplitter(ThinkMarkers markers, bool start_in_reasoning);

  struct Piece {
    bool reasoning = false;
    std::string text;
  };
  // The text of `chunk` (and any held text) that can be classified now; consecutive pieces of
  // the same kind are merged.
  std::vector<Piece> push(std::string_view chunk);
  // Releases the held text at the end of the stream.
  std::vector<Piece> flush();

  bool in_reasoning() const { return reasoning_; }

 private:
  void emit(std::vector<Piece>& out, std::string_view text) const;
  ThinkMarkers markers_;
  bool reasoning_;
  std::string held_;
};

}  // namespace minimax
