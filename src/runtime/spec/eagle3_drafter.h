// One sequence's EAGLE-3 drafting (docs/eagle3.md): the head's row at position p reads the token
// at p + 1 and the target's taps at p, so after each target step the head catches up over the
// newly verified positions (writing its own KV cache), then chains greedy drafts on its own
// output. Taps arrive from the target's steps (Model::hidden_taps) through add_taps; positions the
// target skipped (a prefix-cache hit) start the head's cache later, which only costs accuracy.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/eagle3_head.h"

namespace minimax {

class Eagle3Drafter {
 public:
  explicit Eagle3Drafter(Eagle3Head& head) : head_(head) {}

  // The target computed positions [first, first + count); `taps` holds one row of
  // head.tap_width() floats per position. Rows past the tokens later verified are overwritten by
  // the step that verifies their position, before any draft reads them.
  void add_taps(int64_t first, int64_t count, std::span<const float> taps);
  // Up to `max_tokens` greedy draft tokens to follow `tokens` (the whole sequence), or none when
  // the taps of the positions before its last token have not all arrived.
  std::vector<int32_t> propose(std::span<const int32_t> tokens, int max_tokens);

 private:
  void restart_at(int64_t position);
  static constexpr int64_t kCatchUpRows = 512;

  Eagle3Head& head_;
  Eagle3Cache cache_;
  int64_t base_ = -1;  // the position of the head's cache slot 0 (-1: no taps yet)
  // Positions [base_, drafted_) hold the head's rows computed from verified inputs; row p read
  // token used_[p - base_].
  int64_t drafted_ = 0;
  std::vector<int32_t> used_;
  int64_t taps_first_ = 0;  // taps_ holds positions [taps_first_, taps_first_ + rows)
  std::vector<float> taps_;
  std::vector<int32_t> row_tokens_, row_slots_;
  std::vector<float> hidden_;
};

}  // namespace minimax
