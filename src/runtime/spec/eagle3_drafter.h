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
  // propose() for several sequences of one head (an engine step): the head runs one pass per
  // catch-up piece and per chained position for all of them, so its weights are read once per
  // pass rather than once per sequence. Result s is what drafters[s]->propose(tokens[s],
  // max_tokens[s]) proposes, up to the rounding of rows batched together.
  static std::vector<std::vector<int32_t>> propose_batch(
      std::span<Eagle3Drafter* const> drafters, std::span<const std::span<const int32_t>> tokens,
      std::span<const int> max_tokens);

 private:
  void restart_at(int64_t position);
  // propose()'s steps. start: settles which rows the head must (re)compute; false when it cannot
  // draft now. next_rows: the next piece of the rows [drafted_, n - 1) that catch the head up, at
  // most `budget` of them, into `rows` (false once caught up); rows_done records them.
  // caught_up: the catch-up is over (taps before the last token are dropped). chain_rows: the
  // chained row at `position`, reading `token` and the head's own previous output.
  bool start(std::span<const int32_t> tokens, int max_tokens);
  bool next_rows(std::span<const int32_t> tokens, int64_t budget, Eagle3Head::Rows& rows);
  void rows_done();
  void caught_up(std::span<const int32_t> tokens);
  void chain_rows(int64_t position, int32_t token, Eagle3Head::Rows& rows);
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
  std::vector<float> hidden_, previous_;
  int32_t chain_token_ = 0, chain_slot_ = 0;
  std::shared_ptr<TapStore> store_;
  bool restore_tried_ = false;
  int64_t next_block_ = 0;  // blocks before it are in the store or were never held
  std::vector<uint64_t> block_keys_;
};

}  // namespace minimax
