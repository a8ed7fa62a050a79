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

bool Eagle3Drafter::start(std::span<const int32_t> tokens, int max_tokens) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (base_ < 0 || max_tokens <= 0) return false;
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
  return drafted_ < n - 1 && taps_end >= n - 1;
}

bool Eagle3Drafter::next_rows(std::span<const int32_t> tokens, int64_t budget,
                              Eagle3Head::Rows& rows) {
  const auto n = static_cast<int64_t>(tokens.size());
  const int64_t begin = drafted_, end = std::min(n - 1, begin + budget);
  if (begin >= end) return false;
  const int64_t width = head_.tap_width();
  row_tokens_.assign(tokens.begin() + begin + 1, tokens.begin() + end + 1);
  row_slots_.clear();
  for (int64_t p = begin; p < end; ++p) row_slots_.push_back(static_cast<int32_t>(p - base_));
  rows = {.cache = &cache_,
          .tokens = row_tokens_,
          .slots = row_slots_,
          .hidden = std::span<const float>(taps_.data() + (begin - taps_first_) * width,
                                           static_cast<size_t>((end - begin) * width)),
          .next_hidden = &hidden_};
  return true;
}

void Eagle3Drafter::rows_done() {
  used_.insert(used_.end(), row_tokens_.begin(), row_tokens_.end());
  drafted_ += static_cast<int64_t>(row_tokens_.size());
}

void Eagle3Drafter::caught_up(std::span<const int32_t> tokens) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (store_) publish_blocks(tokens);
  // Taps before the last token's position are no longer read.
  taps_.erase(taps_.begin(), taps_.begin() + (n - 1 - taps_first_) * head_.tap_width());
  drafted_ = taps_first_ = n - 1;
}

void Eagle3Drafter::chain_rows(int64_t position, int32_t token, Eagle3Head::Rows& rows) {
  // The head's own pre-norm output stands in for the target's taps. Its rows sit past drafted_
  // and are overwritten when those positions are verified.
  previous_.swap(hidden_);
  chain_token_ = token;
  chain_slot_ = static_cast<int32_t>(position - base_);
  rows = {.cache = &cache_,
          .tokens = std::span(&chain_token_, 1),
          .slots = std::span(&chain_slot_, 1),
          .hidden = previous_,
          .next_hidden = &hidden_};
}

std::vector<int32_t> Eagle3Drafter::propose(std::span<const int32_t> tokens, int max_tokens) {
  Eagle3Drafter* self = this;
  return propose_batch(std::span(&self, 1), std::span(&tokens, 1), std::span(&max_tokens, 1))[0];
}

std::vector<std::vector<int32_t>> Eagle3Drafter::propose_batch(
    std::span<Eagle3Drafter* const> drafters, std::span<const std::span<const int32_t>> tokens,
    std::span<const int> max_tokens) {
  const size_t S = drafters.size();
  std::vector<std::vector<int32_t>> drafts(S);
  if (S == 0) return drafts;
  Eagle3Head& head = drafters[0]->head_;
  std::vector<char> drafting(S);
  for (size_t s = 0; s < S; ++s) {
    if (&drafters[s]->head_ != &head) fail("eagle3: drafters of different heads in one batch");
    drafting[s] = drafters[s]->start(tokens[s], max_tokens[s]);
  }
  std::vector<Eagle3Head::Rows> batch;
  std::vector<size_t> of;  // batch entry → sequence
  // Catching up, in passes of at most kCatchUpRows rows in all, so that a long prompt's
  // activations stay bounded; only each sequence's last row gives a draft.
  for (;;) {
    batch.clear();
    of.clear();
    int64_t budget = kCatchUpRows;
    for (size_t s = 0; s < S && budget > 0; ++s) {
      Eagle3Head::Rows rows;
      if (!drafting[s] || !drafters[s]->next_rows(tokens[s], budget, rows)) continue;
      budget -= static_cast<int64_t>(rows.tokens.size());
      batch.push_back(rows);
      of.push_back(s);
    }
    if (batch.empty()) break;
    head.forward_batch(batch, head.tap_width());
    for (size_t i = 0; i < batch.size(); ++i) {
      drafters[of[i]]->rows_done();
      drafts[of[i]].assign(1, batch[i].draft);
    }
  }
  for (size_t s = 0; s < S; ++s)
    if (drafting[s]) drafters[s]->caught_up(tokens[s]);
  // The chains: one pass per drafted position for every sequence still drafting.
  for (int k = 1;; ++k) {
    batch.clear();
    of.clear();
    for (size_t s = 0; s < S; ++s) {
      if (!drafting[s] || k >= max_tokens[s]) continue;
      Eagle3Head::Rows rows;
      // Row p reads the token at p + 1: the k-th chained row reads the draft at n - 1 + k.
      drafters[s]->chain_rows(static_cast<int64_t>(tokens[s].size()) - 2 + k, drafts[s].back(),
                              rows);
      batch.push_back(rows);
      of.push_back(s);
    }
    if (batch.empty()) break;
    head.forward_batch(batch, head.hidden_size());
    for (size_t i = 0; i < batch.size(); ++i) drafts[of[i]].push_back(batch[i].draft);
  }
  return drafts;
}

}  // namespace minimax
