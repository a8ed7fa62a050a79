// Log-probabilities, top-K KL divergence and running estimates of `minimax perplexity`
// (runtime/perplexity_stats.h).
#include "runtime/perplexity_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"

namespace minimax {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The row's maximum and Σ exp(x - max), in double.
struct ShiftedSum {
  double max = -kInf, sum = 0;
};

ShiftedSum shifted_sum(std::span<const float> logits) {
  ShiftedSum s;
  for (float x : logits) s.max = std::max(s.max, static_cast<double>(x));
  for (float x : logits) s.sum += std::exp(static_cast<double>(x) - s.max);
  return s;
}

void check_id(int32_t id, size_t vocab, const char* what) {
  if (id < 0 || static_cast<size_t>(id) >= vocab)
    fail("{} {} is outside the vocabulary of {} logits", what, id, vocab);
}

}  // namespace

double log_sum_exp(std::span<const float> logits) {
  const ShiftedSum s = shifted_sum(logits);
  return s.max + std::log(s.sum);
}

std::vector<int32_t> top_k_ids(std::span<const float> logits, int k) {
  const size_t keep = std::min(static_cast<size_t>(std::max(k, 0)), logits.size());
  auto better = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  // A heap of the best `keep` so far with the worst of them on top: one pass, no copy of the row.
  std::vector<int32_t> heap;
  heap.reserve(keep);
  for (size_t i = 0; i < logits.size() && keep > 0; ++i) {
    const auto id = static_cast<int32_t>(i);
    if (heap.size() < keep) {
      heap.push_back(id);
      std::push_heap(heap.begin(), heap.end(), better);
    } else if (better(id, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = id;
      std::push_heap(heap.begin(), heap.end(), better);
    }
  }
  std::sort(heap.begin(), heap.end(), better);
  return heap;
}

int32_t argmax_id(std::span<const float> logits) {
  if (logits.empty()) fail("argmax of an empty row of logits");
  // max_element keeps the first of equal maxima: the lowest id.
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

PositionLogprobs logprobs_over(std::span<const float> logits, std::span<const int32_t> ids,
                               int32_t next) {
  check_id(next, logits.size(), "next token");
  const ShiftedSum s = shifted_sum(logits);
  const double lse = s.max + std::log(s.sum);
  if (!std::isfinite(lse)) fail("a row of logits holds a NaN or an infinity");

  PositionLogprobs out;
  out.next_logprob = static_cast<float>(logits[next] - lse);
  out.ids.assign(ids.begin(), ids.end());
  out.logprobs.reserve(ids.size());
  for (int32_t id : ids) {
    check_id(id, logits.size(), "token id");
    out.logprobs.push_back(static_cast<float>(logits[id] - lse));
  }
  // The rest, summed over its own tokens, walking the row past the sorted ids.
  std::vector<int32_t> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    fail("token id {} appears twice in a top-K list",
         *std::adjacent_find(sorted.begin(), sorted.end()));
  double rest = 0;
  size_t skip = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (skip < sorted.size() && static_cast<size_t>(sorted[skip]) == i) {
      ++skip;
      continue;
    }
    rest += std::exp(static_cast<double>(logits[i]) - s.max);
  }
  out.rest_logprob = rest > 0 ? static_cast<float>(std::log(rest) + s.max - lse)
                              : -std::numeric_limits<float>::infinity();
  return out;
}

double top_k_kl_divergence(const PositionLogprobs& base, const PositionLogprobs& run) {
  if (run.logprobs.size() != base.logprobs.size())
    fail("KL divergence: the run has {} log-probabilities for the base's {} tokens",
         run.logprobs.size(), base.logprobs.size());
  double kl = 0;
  for (size_t i = 0; i < base.logprobs.size(); ++i) {
    const double p = base.logprobs[i], q = run.logprobs[i];
    kl += std::exp(p) * (p - q);
  }
  if (std::isfinite(base.rest_logprob)) {
    if (!std::isfinite(run.rest_logprob)) return kInf;
    const double p = base.rest_logprob, q = run.rest_logprob;
    kl += std::exp(p) * (p - q);
  }
  return std::max(kl, 0.0);
}

double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) fail("percentile of no values");
  if (!(fraction >= 0 && fraction <= 1))
    fail("percentile: fraction {} is outside [0, 1]", fraction);
  std::sort(values.begin(), values.end());
  const double rank = fraction * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  if (values[lo] == values[hi]) return values[lo];  // also when both are +inf
  return values[lo] + (rank - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

void MeanEstimate::add(double x) {
  ++count_;
  sum_ += x;
  sum_squares_ += x * x;
}

double MeanEstimate::mean() const { return count_ > 0 ? sum_ / static_cast<double>(count_) : 0; }

double MeanEstimate::standard_error() const {
  if (count_ < 2) return 0;
  const double n = static_cast<double>(count_), m = mean();
  const double variance = std::max(sum_squares_ / n - m * m, 0.0);
  return std::sqrt(variance / (n - 1));
}

Perplexity perplexity_of(const MeanEstimate& nll) {
  const double value = std::exp(nll.mean());
  return {value, value * nll.standard_error()};
}

void KlComparison::add(const PositionLogprobs& base, const PositionLogprobs& run,
                       int32_t run_top1) {
  if (base.ids.empty()) fail("KL divergence: the base holds no tokens for a position");
  const double kl = top_k_kl_divergence(base, run);
  kl_.add(kl);
  kl_values_.push_back(kl);
  kl_max_ = std::max(kl_max_, kl);
  top1_.add(run_top1 == base.ids[0] ? 1.0 : 0.0);
  base_nll_.add(-static_cast<double>(base.next_logprob));
  max_abs_dlogprob_ = std::max(max_abs_dlogprob_, std::abs(static_cast<double>(run.next_logprob) -
                                                           static_cast<double>(base.next_logprob)));
}

}  // namespace minimax
