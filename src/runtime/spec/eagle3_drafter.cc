// EAGLE-3 drafting of one sequence (runtime/spec/eagle3_drafter.h).
#include "runtime/spec/eagle3_drafter.h"

#include <algorithm>

#include "base/error.h"

namespace minimax {

Eagle3Drafter::Eagle3Drafter(Eagle3Head& head, std::shared_ptr<TapStore> store)
    : head_(head), store_(std::move(store)) {
  if (store_ && store_->width() != head_.tap_width())
    fail("eagle3: a tap store of {} floats per position for a head of {}", store_->width(),
         head_.tap_width());
}

uint64_t Eagle3Drafter::block_key(std::span<const int32_t> tokens, int64_t b) {
  const int64_t size = store_->block_tokens();
  while (static_cast<int64_t>(block_keys_.size()) <= b) {
    const auto k = static_cast<int64_t>(block_keys_.size());
    block_keys_.push_back(
        TapStore::chain(k == 0 ? 0 : block_keys_.back(), tokens.subspan(k * size, size)));
  }
  return block_keys_[b];
}

void Eagle3Drafter::restore_prefix(std::span<const int32_t> tokens) {
  restore_tried_ = true;
  const int64_t size = store_->block_tokens();
  next_block_ = (taps_first_ + size - 1) / size;
  // Only before the head's first row, and from a block boundary (a prefix-cache hit ends on one).
  if (drafted_ != base_ || taps_first_ != base_ || base_ % size != 0 ||
      base_ > static_cast<int64_t>(tokens.size()))
    return;
  std::vector<std::vector<float>> found;  // blocks base_/size - 1, - 2, ...
  for (int64_t b = base_ / size - 1; b >= 0; --b) {
    std::vector<float> rows;
    if (!store_->get(block_key(tokens, b), rows)) break;
    found.push_back(std::move(rows));
  }
  if (found.empty()) return;
  std::vector<float> taps;
  taps.reserve(found.size() * found[0].size() + taps_.size());
  for (auto it = found.rbegin(); it != found.rend(); ++it)
    taps.insert(taps.end(), it->begin(), it->end());
  taps.insert(taps.end(), taps_.begin(), taps_.end());
  taps_.swap(taps);
  base_ = drafted_ = taps_first_ = base_ - static_cast<int64_t>(found.size()) * size;
}

void Eagle3Drafter::publish_blocks(std::span<const int32_t> tokens) {
  const int64_t size = store_->block_tokens(), width = head_.tap_width();
  const auto final_end = static_cast<int64_t>(tokens.size()) - 1;  // the last token has no taps
  const int64_t taps_end = taps_first_ + static_cast<int64_t>(taps_.size()) / width;
  for (int64_t b = std::max(next_block_, (taps_first_ + size - 1) / size);
       (b + 1) * size <= std::min(final_end, taps_end); ++b) {
    store_->put(block_key(tokens, b), std::span<const float>(taps_).subspan(
                                          static_cast<size_t>((b * size - taps_first_) * width),
                                          static_cast<size_t>(size * width)));
    next_block_ = b + 1;
  }
}

void Eagle3Drafter::restart_at(int64_t position) {
  base_ = drafted_ = taps_first_ = position;
  used_.clear();
  taps_.clear();
}

void Eagle3Drafter::add_taps(int64_t first, int64_t count, std::span<const float> taps) {
  const int64_t width = head_.tap_width();
  if (base_ < 0) restart_at(first);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t p = first + i;
    const auto end = taps_first_ + static_cast<int64_t>(taps_.size()) / width;
    // Taps held must be consecutive: a recompute, a new prompt or a gap (positions the target
    // skipped) starts them again here; propose() restarts the head's rows if they cannot follow.
    if (p < taps_first_ || p > end) {
      taps_first_ = p;
      taps_.clear();
    }
    const std::span<const float> row = taps.subspan(static_cast<size_t>(i * width), width);
    const auto at = static_cast<size_t>((p - taps_first_) * width);
    if (at == taps_.size())
      taps_.insert(taps_.end(), row.begin(), row.end());
    else
      std::copy(row.begin(), row.end(), taps_.begin() + static_cast<int64_t>(at));
  }
  // Rows past this step's were computed for tokens since rejected: the target's steps run in
  // position order, so nothing after them is current.
  if (count > 0)
    taps_.resize(
        std::min(taps_.size(), static_cast<size_t>((first + count - taps_first_) * width)));
}

std::vector<int32_t> Eagle3Drafter::propose(std::span<const int32_t> tokens, int max_tokens) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (base_ < 0 || max_tokens <= 0) return {};
  if (store_ && !restore_tried_) restore_prefix(tokens);
  // Rows whose token is no longer the sequence's (a new prompt over a kept cache) are redone.
  int64_t valid = base_;
  while (valid < drafted_ && valid + 1 < n && used_[valid - base_] == tokens[valid + 1]) ++valid;
  drafted_ = valid;
  used_.resize(static_cast<size_t>(drafted_ - base_));
  const int64_t width = head_.tap_width();
  const auto taps_end = taps_first_ + static_cast<int64_t>(taps_.size()) / width;
  // The taps of the rows to redo are gone: the head's cache starts afresh where the taps begin
  // (its earlier context is lost, which only lowers acceptance).
  if (drafted_ < taps_first_) {
    base_ = drafted_ = taps_first_;
    used_.clear();
  }
  // The head catches up over positions [drafted_, n - 1): every one needs its taps.
  if (drafted_ >= n - 1 || taps_end < n - 1) return {};
  // In pieces of kCatchUpRows rows, so that a long prompt's activations stay bounded; only the
  // last row's output is a draft.
  std::vector<int32_t> draft(1);
  for (int64_t begin = drafted_; begin < n - 1; begin += kCatchUpRows) {
    const int64_t end = std::min(n - 1, begin + kCatchUpRows);
    row_tokens_.assign(tokens.begin() + begin + 1, tokens.begin() + end + 1);
    row_slots_.clear();
    for (int64_t p = begin; p < end; ++p) row_slots_.push_back(static_cast<int32_t>(p - base_));
    const std::span<const float> rows(taps_.data() + (begin - taps_first_) * width,
                                      static_cast<size_t>((end - begin) * width));
    draft[0] = head_.forward(cache_, row_tokens_, row_slots_, rows, width, hidden_);
    used_.insert(used_.end(), row_tokens_.begin(), row_tokens_.end());
  }
  if (store_) publish_blocks(tokens);
  // Taps before the last token's position are no longer read.
  taps_.erase(taps_.begin(), taps_.begin() + (n - 1 - taps_first_) * width);
  drafted_ = taps_first_ = n - 1;
  // The chain: the head's own pre-norm output stands in for the target's taps. Its rows sit past
  // drafted_ and are overwritten when those positions are verified.
  std::vector<float> previous;
  for (int k = 1; k < max_tokens; ++k) {
    previous.swap(hidden_);
    const int32_t token = draft.back();
    const auto slot = static_cast<int32_t>(n - 2 + k - base_);
    draft.push_back(head_.forward(cache_, std::span(&token, 1), std::span(&slot, 1), previous,
                                  head_.hidden_size(), hidden_));
  }
  return draft;
}

}  // namespace minimax
