// One sequence's EAGLE-3 drafting (docs/eagle3.md): the head's row at position p reads the token
// at p + 1 and the target's taps at p, so after each target step the head catches up over the
// newly verified positions (writing its own KV cache), then chains greedy drafts on its own
// output. Taps arrive from the target's steps (Model::hidden_taps) through add_taps. Positions the
// target skipped (a prefix-cache hit) have none: with a TapStore the drafter takes the taps of
// those blocks from it (and offers it every whole block it sees); without, or for blocks it does
// not hold, the head's cache starts later, which only costs accuracy.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "model/eagle3_head.h"
#include "runtime/spec/tap_store.h"

namespace minimax {

class Eagle3Drafter {
 public:
  // `store` (may be null) is shared with the server's other sequences; its width must be the
  // head's tap width. With a store, the tokens before the sequence's last must not change between
  // calls (the block keys are kept), as in the engine; the generation loop passes none.
  explicit Eagle3Drafter(Eagle3Head& head, std::shared_ptr<TapStore> store = nullptr);

  // The target computed positions [first, first + count); `taps` holds one row of
  // head.tap_width() floats per position. Rows past the tokens later verified are overwritten by
  // the step that verifies their position, before any draft reads them.
  void add_taps(int64_t first, int64_t count, std::span<const float> taps);
  // Up to `max_tokens` greedy draft tokens to follow `tokens` (the whole sequence), or none when
  // the taps of the positions before its last token have not all arrived.
  std::vector<int32_t> propose(std::span<const int32_t> tokens, int max_tokens);

 private:
  void restart_at(int64_t position);
  // Before the head's first row: the taps of the whole blocks before the first computed position,
  // as far back as the store holds them without a gap.
  void restore_prefix(std::span<const int32_t> tokens);
  // Offers the store every whole block of final positions (before tokens' last) held in taps_.
  void publish_blocks(std::span<const int32_t> tokens);
  // The store's key of block b of `tokens` (keys of the blocks before it kept in block_keys_).
  uint64_t block_key(std::span<const int32_t> tokens, int64_t b);
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
  std::shared_ptr<TapStore> store_;
  bool restore_tried_ = false;
  int64_t next_block_ = 0;  // blocks before it are in the store or were never held
  std::vector<uint64_t> block_keys_;
};

}  // namespace minimax
