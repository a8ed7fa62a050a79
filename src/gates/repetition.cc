// Tail-periodicity search for the greedy-loop gate.
#include "gates/repetition.h"

#include <algorithm>

namespace minimax::gates {
namespace {

// Number of trailing tokens that are periodic with `period` (tokens[i] == tokens[i - period]),
// counting the first unit itself.
size_t periodic_tail_length(const std::vector<std::string>& tokens, size_t period) {
  const size_t n = tokens.size();
  size_t length = period;
  while (length < n && tokens[n - 1 - length] == tokens[n - 1 - length + period]) ++length;
  return length;
}

}  // namespace

std::optional<LoopFinding> find_tail_loop(const std::vector<std::string>& tokens,
                                          bool hit_max_tokens, const LoopParams& params) {
  const size_t n = tokens.size();
  const size_t min_repeats =
      hit_max_tokens ? std::min(params.min_repeats, params.length_min_repeats) : params.min_repeats;
  const size_t min_span =
      hit_max_tokens ? std::min(params.min_span, params.length_min_span) : params.min_span;
  const size_t max_period = std::min(params.max_period, n / std::max<size_t>(min_repeats, 1));
  for (size_t period = 1; period <= max_period; ++period) {
    const size_t length = periodic_tail_length(tokens, period);
    const size_t repeats = length / period;
    if (repeats < min_repeats || repeats * period < min_span) continue;
    LoopFinding finding;
    finding.period = period;
    finding.repeats = repeats;
    for (size_t i = n - period; i < n; ++i) finding.unit += tokens[i];
    return finding;
  }
  return std::nullopt;
}

std::vector<std::string> utf8_characters(const std::string& text) {
  std::vector<std::string> characters;
  for (size_t i = 0; i < text.size();) {
    const unsigned char lead = static_cast<unsigned char>(text[i]);
    size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    length = std::min(length, text.size() - i);
    characters.push_back(text.substr(i, length));
    i += length;
  }
  return characters;
}

}  // namespace minimax::gates
