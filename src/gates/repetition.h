// The greedy-loop detector: finds a tail of the output that repeats one unit (a run of tokens)
// over and over, the shape a stuck greedy decode takes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace minimax::gates {

struct LoopParams {
  // A tail repeating a unit of 1..max_period tokens at least min_repeats times, covering at least
  // min_span tokens, is a loop. The span keeps "1000000" or "!!!" from counting.
  size_t max_period = 64;
  size_t min_repeats = 4;
  size_t min_span = 24;
  // When the output hit max_tokens, a weaker repeating tail suffices: a decode that ran to the
  // limit while repeating would have gone on repeating.
  size_t length_min_repeats = 2;
  size_t length_min_span = 16;
};

struct LoopFinding {
  size_t period = 0;   // tokens per repeated unit
  size_t repeats = 0;  // whole repetitions at the end
  std::string unit;    // the repeated unit's text, for the report
};

// The smallest-period repeating tail of `tokens` that counts as a loop under `params`, if any.
std::optional<LoopFinding> find_tail_loop(const std::vector<std::string>& tokens,
                                          bool hit_max_tokens, const LoopParams& params);

// Splits text into UTF-8 characters: the fallback unit when a server returns no token strings.
std::vector<std::string> utf8_characters(const std::string& text);

}  // namespace minimax::gates
