// One sequence's speculative decode over a LogitsSource (runtime/spec/speculative_stepper.h).
#include "runtime/spec/speculative_stepper.h"

#include <algorithm>
#include <chrono>

#include "base/clock.h"
#include "base/error.h"

namespace minimax {

SpeculativeStepper::SpeculativeStepper(LogitsSource& source, const SpeculativeConfig& config,
                                       StepCostModel& cost, std::shared_ptr<RecentOutputs> recent,
                                       std::shared_ptr<Eagle3Head> head)
    : source_(source),
      config_(config),
      cost_(cost),
      drafter_(config, std::move(recent), std::move(head)),
      policy_(config) {
  if (drafter_.wants_taps())
    source_.set_tap_sink([this](int64_t first, int64_t count, std::span<const float> taps) {
      drafter_.add_taps(first, count, taps);
    });
}

SpeculativeStepper::~SpeculativeStepper() {
  if (drafter_.wants_taps()) source_.set_tap_sink(nullptr);
}

void SpeculativeStepper::start(std::span<const int32_t> prompt) {
  fed_.assign(prompt.begin(), prompt.end());
  rows_.clear();
  rows_first_ = rows_count_ = 0;
  verify_drafted_ = verify_accepted_ = 0;
}

void SpeculativeStepper::close_verify() {
  if (verify_drafted_ > 0) {
    policy_.record(verify_drafted_, verify_accepted_);
    counts_.add_verify(verify_drafted_, verify_accepted_);
  }
  verify_drafted_ = verify_accepted_ = 0;
}

std::span<float> SpeculativeStepper::next_logits(std::span<const int32_t> sequence) {
  if (sequence.empty()) fail("speculative decode: empty sequence");
  const auto last = static_cast<int64_t>(sequence.size()) - 1;
  const auto vocab = rows_count_ > 0 ? rows_.size() / static_cast<size_t>(rows_count_) : 0;
  if (policy_.shadow_pending()) policy_.shadow_emitted(sequence[last]);
  // A verified row: the last token is the draft token the verify pass ran at its position.
  if (last > rows_first_ && last < rows_first_ + rows_count_ &&
      last < static_cast<int64_t>(fed_.size()) && fed_[last] == sequence[last]) {
    ++verify_accepted_;
    return std::span<float>(rows_).subspan((last - rows_first_) * vocab, vocab);
  }
  close_verify();
  // Roll back to the longest prefix the source holds that the sequence agrees with.
  size_t common = 0;
  const size_t limit = std::min(fed_.size(), static_cast<size_t>(last));
  while (common < limit && fed_[common] == sequence[common]) ++common;
  if (common < fed_.size()) {
    source_.truncate(static_cast<int64_t>(common));
    fed_.resize(common);
  }
  std::vector<int32_t> feed(sequence.begin() + static_cast<int64_t>(common), sequence.end());
  std::vector<int32_t> proposal = drafter_.propose(sequence, config_.num_speculative_tokens);
  const int64_t room = source_.capacity() - static_cast<int64_t>(sequence.size());
  const int available = static_cast<int>(
      std::min<int64_t>(static_cast<int64_t>(proposal.size()), std::max<int64_t>(room, 0)));
  const int draft =
      policy_.choose(available, cost_, static_cast<int64_t>(feed.size()), /*step_outputs=*/1);
  if (draft > 0) {
    feed.insert(feed.end(), proposal.begin(), proposal.begin() + draft);
    policy_.shadow_propose({});
  } else if (!policy_.shadow_pending()) {
    policy_.shadow_propose(std::move(proposal));
  }
  const auto start = std::chrono::steady_clock::now();
  rows_ = feed.size() == 1 ? source_.decode(feed[0]) : source_.decode_all(feed);
  cost_.record(static_cast<int64_t>(feed.size()), seconds_since(start));
  ++counts_.forward_steps;
  fed_.insert(fed_.end(), feed.begin(), feed.end());
  const auto fed_rows = static_cast<int64_t>(feed.size());
  const auto row_size = rows_.size() / static_cast<size_t>(fed_rows);
  // Keep the rows from the last token on: the tokens before it (rarely any) are context only.
  const int64_t skip = last - static_cast<int64_t>(common);
  rows_.erase(rows_.begin(), rows_.begin() + skip * static_cast<int64_t>(row_size));
  rows_first_ = last;
  rows_count_ = fed_rows - skip;
  verify_drafted_ = draft;
  return std::span<float>(rows_).first(row_size);
}

void SpeculativeStepper::finish(std::span<const int32_t> output) {
  close_verify();
  drafter_.finish(output);
}

}  // namespace minimax
