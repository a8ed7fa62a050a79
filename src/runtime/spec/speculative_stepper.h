// Speculative decoding of one sequence over a LogitsSource (generate, chat, bench): each call
// gives the logits after the sequence's last token. Where the last token equals the draft token
// verified at that position, the row comes from the verify pass already run; otherwise the
// rejected draft tokens are rolled back and one forward pass runs the new token with a new draft.
// With batch-invariant logits (the kernels' --batch-invariant, on whenever speculation is) a row
// is bit-identical to the one a plain decode would compute, so whatever the caller does with it
// (greedy, seeded sampling, forced tokens, logprobs) gives the plain run's result.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "runtime/generator.h"
#include "runtime/spec/draft_policy.h"
#include "runtime/spec/drafter.h"
#include "runtime/spec/spec_decode_counts.h"

namespace minimax {

class SpeculativeStepper {
 public:
  // `source` must outlive the stepper; `cost` is shared by the steps of one model. With an
  // EAGLE-3 `head` the stepper takes the source's taps from construction on (so make it before
  // the prefill) until it is destroyed.
  SpeculativeStepper(LogitsSource& source, const SpeculativeConfig& config, StepCostModel& cost,
                     std::shared_ptr<RecentOutputs> recent = nullptr,
                     std::shared_ptr<Eagle3Head> head = nullptr);
  ~SpeculativeStepper();
  SpeculativeStepper(const SpeculativeStepper&) = delete;
  SpeculativeStepper& operator=(const SpeculativeStepper&) = delete;

  // The source was just prefilled with `prompt`.
  void start(std::span<const int32_t> prompt);
  // Logits after the last token of `sequence` (the prompt and every token emitted since, each
  // call one token longer than the previous). Valid until the next call.
  std::span<float> next_logits(std::span<const int32_t> sequence);
  // The sequence ended with `output` after its prompt: closes the last verify's record and gives
  // the output to the suffix cache.
  void finish(std::span<const int32_t> output);

  const SpecDecodeCounts& counts() const { return counts_; }
  const DraftPolicy& policy() const { return policy_; }

 private:
  void close_verify();

  LogitsSource& source_;
  SpeculativeConfig config_;
  StepCostModel& cost_;
  Drafter drafter_;
  DraftPolicy policy_;
  SpecDecodeCounts counts_;
  std::vector<int32_t> fed_;  // what the source holds, in position order
  std::vector<float> rows_;   // logits after fed_[rows_first_ + i], row i
  int64_t rows_first_ = 0, rows_count_ = 0;
  int verify_drafted_ = 0, verify_accepted_ = 0;  // the open verify step
};

}  // namespace minimax
