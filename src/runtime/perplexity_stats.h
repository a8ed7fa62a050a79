// The statistics of `minimax perplexity` (docs/perplexity.md), as pure functions over rows of
// logits so that they can be checked by hand: the log-probabilities a scored position reduces to,
// the KL divergence over a base run's top-K tokens plus one bucket for the rest, and the running
// means with their standard errors (llama-perplexity's estimates).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace minimax {

// One scored position reduced to what a later comparison needs. Every value is a float, and a live
// run rounds its own values to float the same way before comparing, so that a run compared with
// its own base gives a KL divergence of exactly 0 and a top-1 agreement of exactly 1.
struct PositionLogprobs {
  float next_logprob = 0;  // log p of the token that actually follows
  // log of the probability of every token not in `ids`, summed over those tokens directly (not
  // as 1 - the rest, which would lose it when it is small); -inf when `ids` is the whole
  // vocabulary.
  float rest_logprob = 0;
  std::vector<int32_t> ids;     // the base's top-K, most likely first (ties: lower id first)
  std::vector<float> logprobs;  // log p of each of `ids`
};

// log Σ exp(logits), in double, shifted by the maximum.
double log_sum_exp(std::span<const float> logits);

// The `k` most likely ids of a row, most likely first, ties broken towards the lower id (so that
// ids[0] is the argmax that argmax_id gives). k is capped at the row's size.
std::vector<int32_t> top_k_ids(std::span<const float> logits, int k);

// The lowest id among the largest logits.
int32_t argmax_id(std::span<const float> logits);

// The log-probabilities of `ids` (any order, no repeats) and of the rest of the row, and of the
// token `next`. Error when `next` or an id is outside the row.
PositionLogprobs logprobs_over(std::span<const float> logits, std::span<const int32_t> ids,
                               int32_t next);

// KL(P || Q) of the base P and the run Q over the base's tokens (`base.ids`, for which `run` must
// hold the run's log-probabilities in the same order) and one bucket for all other tokens. Merging
// tokens into a bucket never raises a KL divergence (log-sum inequality), so this is a lower bound
// of the KL over the whole vocabulary, equal to it when the base's top-K holds nearly all the mass.
// Negative values from the float rounding of the stored log-probabilities are returned as 0; a
// bucket the base gives mass and the run none gives +inf.
double top_k_kl_divergence(const PositionLogprobs& base, const PositionLogprobs& run);

// The value below which `fraction` of `values` lie, interpolated linearly between the two nearest
// ranks (numpy's default: rank fraction·(n-1) of the sorted values). Error when `values` is empty
// or fraction is outside [0, 1].
double percentile(std::vector<double> values, double fraction);

// A mean and its standard error, as llama-perplexity estimates them: sqrt((E[x²] - E[x]²) / (n-1)).
class MeanEstimate {
 public:
  void add(double x);
  int64_t count() const { return count_; }
  double mean() const;            // 0 when nothing was added
  double standard_error() const;  // 0 with fewer than two values

 private:
  int64_t count_ = 0;
  double sum_ = 0, sum_squares_ = 0;
};

// The perplexity of negative log-likelihoods (in nats): exp(mean NLL), with llama-perplexity's ±
// estimate exp(mean)·(standard error of the mean NLL), the first-order error of exp.
struct Perplexity {
  double value = 0, standard_error = 0;
};
Perplexity perplexity_of(const MeanEstimate& nll);

// A run against its base, position by position.
class KlComparison {
 public:
  // `run` holds the run's log-probabilities over base.ids; `run_top1` is the run's argmax.
  void add(const PositionLogprobs& base, const PositionLogprobs& run, int32_t run_top1);

  int64_t count() const { return kl_.count(); }
  const MeanEstimate& kl() const { return kl_; }
  // Fraction of positions whose most likely token is the base's, and its standard error
  // sqrt(p(1-p)/(n-1)).
  const MeanEstimate& top1() const { return top1_; }
  // The base's negative log-likelihood of each next token (its perplexity, next to the run's).
  const MeanEstimate& base_nll() const { return base_nll_; }
  double kl_percentile(double fraction) const { return percentile(kl_values_, fraction); }
  double kl_max() const { return kl_max_; }
  // The largest |log p_run(next) - log p_base(next)| over the positions.
  double max_abs_dlogprob() const { return max_abs_dlogprob_; }

 private:
  MeanEstimate kl_, top1_, base_nll_;
  std::vector<double> kl_values_;
  double kl_max_ = 0, max_abs_dlogprob_ = 0;
};

}  // namespace minimax
