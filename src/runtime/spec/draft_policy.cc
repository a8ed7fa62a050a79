// Step costs and draft-length choice (runtime/spec/draft_policy.h).
#include "runtime/spec/draft_policy.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace minimax {
namespace {

// Each record ages the counts, so a sequence that leaves a copied span stops drafting within a
// few steps, and one that starts copying resumes as quickly.
constexpr double kDecay = 0.85;
constexpr double kTimeWeight = 0.25;  // weight of a new step time in the running average
// The prior's arithmetic per extra token, in one-token steps: small (a CPU runs a prompt's tokens
// several times faster than decoding them), so unmeasured sizes look cheap and are tried.
constexpr double kTokenArithmetic = 1.0 / 32;

}  // namespace

StepCostModel::StepCostModel(int experts, int top_k, double expert_share)
    : experts_(experts),
      top_k_(top_k),
      expert_share_(std::clamp(expert_share, 0.0, 1.0)),
      average_(static_cast<size_t>(bucket(int64_t{1} << 20) + 1), 0.0) {}

double StepCostModel::expected_distinct_experts(int experts, int top_k, int64_t tokens) {
  if (experts <= 0 || top_k <= 0) return 0;
  const double miss = 1.0 - static_cast<double>(top_k) / experts;
  return experts * (1.0 - std::pow(miss, static_cast<double>(tokens)));
}

double StepCostModel::prior(int64_t tokens) const {
  if (tokens <= 1) return 1.0;
  const double union_ratio =
      experts_ > 0 && top_k_ > 0
          ? expected_distinct_experts(experts_, top_k_, tokens) / static_cast<double>(top_k_)
          : 1.0;
  return (1.0 - expert_share_) + expert_share_ * union_ratio +
         kTokenArithmetic * static_cast<double>(tokens - 1);
}

int64_t StepCostModel::bucket(int64_t tokens) {
  tokens = std::clamp<int64_t>(tokens, 1, int64_t{1} << 20);
  if (tokens <= kExact) return tokens;
  // (kExact, 2·kExact) → kExact + 1, and so on: sizes above kExact are rare in verify steps.
  return kExact + 1 + std::bit_width(static_cast<uint64_t>(tokens - 1)) -
         std::bit_width(uint64_t{kExact});
}

void StepCostModel::record(int64_t tokens, double seconds) {
  if (!(seconds > 0) || tokens <= 0) return;
  double& avg = average_[static_cast<size_t>(bucket(tokens))];
  avg = avg == 0 ? seconds : (1 - kTimeWeight) * avg + kTimeWeight * seconds;
}

bool StepCostModel::measured(int64_t tokens) const {
  return average_[static_cast<size_t>(bucket(tokens))] > 0;
}

double StepCostModel::seconds(int64_t tokens) const {
  const int64_t b = bucket(tokens);
  if (average_[static_cast<size_t>(b)] > 0) return average_[static_cast<size_t>(b)];
  // The nearest measured size, below first (a smaller step is the likelier one to be known).
  for (int64_t d = 1; d < static_cast<int64_t>(average_.size()); ++d) {
    for (int64_t m : {b - d, b + d}) {
      if (m < 1 || m >= static_cast<int64_t>(average_.size()) ||
          average_[static_cast<size_t>(m)] <= 0)
        continue;
      const int64_t size = m <= kExact ? m : kExact << (m - kExact);  // the bucket's top
      return average_[static_cast<size_t>(m)] * prior(tokens) / prior(size);
    }
  }
  return prior(tokens);
}

DraftPolicy::DraftPolicy(const SpeculativeConfig& config) : config_(config) {}

double DraftPolicy::acceptance() const { return accepted_ / (accepted_ + rejected_); }

double DraftPolicy::expected_tokens(int draft) const {
  const double a = acceptance();
  double sum = 1, term = 1;
  for (int i = 0; i < draft; ++i) sum += (term *= a);
  return sum;
}

int DraftPolicy::choose(int available, const StepCostModel& cost, int64_t step_tokens,
                        int64_t step_outputs) const {
  available = std::min(available, config_.num_speculative_tokens);
  if (available <= 0) return 0;
  if (!config_.adaptive) return available;
  step_tokens = std::max<int64_t>(step_tokens, 1);
  step_outputs = std::max<int64_t>(step_outputs, 1);
  // Tokens per second of the step as planned, against the same step carrying d draft tokens.
  double best_rate = static_cast<double>(step_outputs) / cost.seconds(step_tokens);
  int best = 0;
  for (int d = 1; d <= available; ++d) {
    const double rate = (static_cast<double>(step_outputs) - 1 + expected_tokens(d)) /
                        cost.seconds(step_tokens + d);
    if (rate > best_rate) best_rate = rate, best = d;
  }
  return best;
}

void DraftPolicy::record(int drafted, int accepted) {
  if (drafted <= 0) return;
  accepted_ = kDecay * accepted_ + accepted;
  rejected_ = kDecay * rejected_ + (accepted < drafted ? 1 : 0);
}

void DraftPolicy::shadow_propose(std::vector<int32_t> proposal) {
  shadow_ = std::move(proposal);
  shadow_pos_ = 0;
}

void DraftPolicy::shadow_emitted(int32_t token) {
  if (shadow_pos_ >= shadow_.size()) return;
  if (shadow_[shadow_pos_] == token) {
    ++shadow_pos_;
    if (shadow_pos_ == shadow_.size()) {
      record(static_cast<int>(shadow_.size()), static_cast<int>(shadow_pos_));
      shadow_.clear();
    }
    return;
  }
  record(static_cast<int>(shadow_.size()), static_cast<int>(shadow_pos_));
  shadow_.clear();
}

}  // namespace minimax
