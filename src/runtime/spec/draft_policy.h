// When a draft is worth verifying on a MoE model. Verifying n tokens in one forward pass reads the
// union of their routed experts: for n tokens routed to k of E experts, about
// E·(1 − (1 − k/E)^n) distinct experts per layer against k for one token, so on a CPU, where
// decode is bound by reading weights, a short or unlikely draft costs more than it gains. Each
// step's time is measured as it runs (StepCostModel), each sequence's acceptance is tracked
// (DraftPolicy), and a draft is carried only as far as its expected tokens per second beat the
// step without it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/spec/speculative_config.h"

namespace minimax {

class StepCostModel {
 public:
  // `experts` E, `top_k` routed per token, and the share of a one-token step's time spent reading
  // routed experts (0 for a dense model: then only the measurements shape the cost).
  StepCostModel(int experts, int top_k, double expert_share);

  static double expected_distinct_experts(int experts, int top_k, int64_t tokens);
  // The prior: a step of `tokens` tokens relative to a one-token step, from the expert union.
  double prior(int64_t tokens) const;
  // A step of `tokens` tokens (all sequences together) took `seconds`.
  void record(int64_t tokens, double seconds);
  // Estimated seconds of a step of `tokens` tokens: the running average where that size was
  // measured, else the prior scaled to the nearest measured size (in relative units when nothing
  // was measured yet). Unmeasured sizes are thus estimated optimistically (the prior ignores the
  // arithmetic), so each is tried and then known.
  double seconds(int64_t tokens) const;
  bool measured(int64_t tokens) const;

 private:
  static constexpr int64_t kExact = 256;  // sizes above share power-of-two buckets
  static int64_t bucket(int64_t tokens);
  int experts_, top_k_;
  double expert_share_;
  std::vector<double> average_;  // by bucket; 0 = not measured
};

// One sequence's acceptance record and draft-length choice.
class DraftPolicy {
 public:
  explicit DraftPolicy(const SpeculativeConfig& config);

  // Per-position acceptance estimate α: a draft token is accepted with probability α given that
  // the ones before it were (a geometric model, fitted on accepted tokens and rejections).
  double acceptance() const;
  // Tokens expected from a verify of `draft` draft tokens (the model's own token included).
  double expected_tokens(int draft) const;
  // How many of `available` draft tokens to carry into a step of `step_tokens` tokens that emits
  // `step_outputs` tokens without them (0: verify nothing this step).
  int choose(int available, const StepCostModel& cost, int64_t step_tokens,
             int64_t step_outputs) const;
  // After verifying `drafted` tokens of which the first `accepted` were right.
  void record(int drafted, int accepted);

  // Drafts that were not verified are still scored against what the model then emitted, so that
  // a sequence which stopped drafting starts again when its drafts would have been right. Give
  // the proposal made before a token is emitted; then every emitted token.
  void shadow_propose(std::vector<int32_t> proposal);
  void shadow_emitted(int32_t token);
  bool shadow_pending() const { return !shadow_.empty(); }

 private:
  SpeculativeConfig config_;
  double accepted_ = 1, rejected_ = 1;  // decayed counts; the prior is α = 0.5
  std::vector<int32_t> shadow_;
  size_t shadow_pos_ = 0;
};

}  // namespace minimax
