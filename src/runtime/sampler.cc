// Sampling steps over a logits row (runtime/sampler.h): penalties, temperature, min-p, top-k,
// top-p, greedy and seeded draws, logprobs.
#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"

namespace minimax {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kGreedyEpsilon = 1e-5f;  // vLLM's _SAMPLING_EPS

// Largest finite logit, or -inf when there is none.
float max_finite(std::span<const float> logits) {
  float best = kNegInf;
  for (float l : logits)
    if (l > best) best = l;
  return best;
}

// Order of "more probable first": higher logit, then lower id.
struct MoreProbable {
  std::span<const float> logits;
  bool operator()(int32_t a, int32_t b) const {
    return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
  }
};

}  // namespace

void validate_sampling_params(const SamplingParams& p) {
  if (!std::isfinite(p.temperature) || p.temperature < 0)
    fail("temperature: must be a finite number >= 0, got {}", p.temperature);
  if (p.top_k < -1) fail("top_k: must be -1 or 0 (off) or a positive count, got {}", p.top_k);
  if (!(p.top_p > 0 && p.top_p <= 1)) fail("top_p: must be in (0, 1], got {}", p.top_p);
  if (!(p.min_p >= 0 && p.min_p <= 1)) fail("min_p: must be in [0, 1], got {}", p.min_p);
  if (!std::isfinite(p.repetition_penalty) || p.repetition_penalty <= 0)
    fail("repetition_penalty: must be a finite number > 0, got {}", p.repetition_penalty);
  if (!(p.presence_penalty >= -2 && p.presence_penalty <= 2))
    fail("presence_penalty: must be in [-2, 2], got {}", p.presence_penalty);
  if (!(p.frequency_penalty >= -2 && p.frequency_penalty <= 2))
    fail("frequency_penalty: must be in [-2, 2], got {}", p.frequency_penalty);
  if (p.top_logprobs < 0) fail("top_logprobs: must be >= 0, got {}", p.top_logprobs);
}

SamplingParams apply_overrides(SamplingParams p, const SamplingOverrides& o) {
  p.temperature = o.temperature.value_or(p.temperature);
  p.top_p = o.top_p.value_or(p.top_p);
  p.top_k = o.top_k.value_or(p.top_k);
  p.min_p = o.min_p.value_or(p.min_p);
  p.repetition_penalty = o.repetition_penalty.value_or(p.repetition_penalty);
  p.presence_penalty = o.presence_penalty.value_or(p.presence_penalty);
  p.frequency_penalty = o.frequency_penalty.value_or(p.frequency_penalty);
  p.seed = o.seed.value_or(p.seed);
  return p;
}

bool is_greedy(const SamplingParams& params) { return params.temperature < kGreedyEpsilon; }

// ---- TokenHistory -------------------------------------------------------------------------------

TokenHistory::TokenHistory(std::span<const int32_t> prompt) {
  for (int32_t t : prompt) mark_seen(t);
}

void TokenHistory::mark_seen(int32_t token) {
  if (index_.emplace(token, 0).second) seen_.push_back(token);
}

void TokenHistory::add_output(int32_t token) {
  mark_seen(token);
  size_t& slot = index_[token];
  if (slot == 0) {
    output_counts_.emplace_back(token, 0);
    slot = output_counts_.size();
  }
  ++output_counts_[slot - 1].second;
}

// ---- Steps --------------------------------------------------------------------------------------

void apply_penalties(std::span<float> logits, const TokenHistory& history,
                     const SamplingParams& params) {
  const auto in_row = [&](int32_t id) {
    return id >= 0 && static_cast<size_t>(id) < logits.size();
  };
  const float r = params.repetition_penalty;
  if (r != 1.0f) {
    for (int32_t id : history.seen()) {
      if (!in_row(id)) continue;
      float& l = logits[id];
      l = l > 0 ? l / r : l * r;
    }
  }
  if (params.presence_penalty != 0 || params.frequency_penalty != 0) {
    for (const auto& [id, count] : history.output_counts()) {
      if (!in_row(id)) continue;
      logits[id] -= params.frequency_penalty * static_cast<float>(count) +
                    (count > 0 ? params.presence_penalty : 0.0f);
    }
  }
}

void apply_temperature(std::span<float> logits, float temperature) {
  if (temperature == 1.0f) return;
  for (float& l : logits) l /= temperature;
}

void apply_min_p(std::span<float> logits, float min_p) {
  if (min_p <= 0) return;
  const float top = max_finite(logits);
  // prob_i / prob_max = exp(l_i − l_max): the softmax's normaliser cancels.
  for (float& l : logits)
    if (std::exp(static_cast<double>(l) - top) < min_p) l = kNegInf;
}

void apply_top_k(std::span<float> logits, int k) {
  if (k <= 0 || static_cast<size_t>(k) >= logits.size()) return;
  std::vector<float> copy(logits.begin(), logits.end());
  std::nth_element(copy.begin(), copy.begin() + (k - 1), copy.end(), std::greater<float>());
  const float kth = copy[k - 1];
  for (float& l : logits)
    if (l < kth) l = kNegInf;
}

void apply_top_p(std::span<float> logits, float top_p) {
  if (top_p >= 1) return;
  std::vector<int32_t> ids;
  ids.reserve(logits.size());
  const float top = max_finite(logits);
  double total = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] == kNegInf) continue;
    ids.push_back(static_cast<int32_t>(i));
    total += std::exp(static_cast<double>(logits[i]) - top);
  }
  // Reaching p within float rounding counts, so that a hand-computed boundary (e.g. 0.5 + 0.3 for
  // p = 0.8) keeps exactly the tokens that sum to it.
  const double target = top_p * total * (1 - 1e-6);
  const MoreProbable more{logits};
  // Sort only as much of the candidates as the kept set needs: 64, 128, ... of them.
  size_t sorted = 0, kept = ids.size();
  double cumulative = 0;
  bool reached = false;
  for (size_t want = 64; !reached && sorted < ids.size(); want *= 2) {
    const size_t end = std::min(want, ids.size());
    std::partial_sort(ids.begin() + sorted, ids.begin() + end, ids.end(), more);
    for (; sorted < end && !reached; ++sorted) {
      cumulative += std::exp(static_cast<double>(logits[ids[sorted]]) - top);
      reached = cumulative >= target;
    }
  }
  if (reached) kept = sorted;
  for (size_t i = kept; i < ids.size(); ++i) logits[ids[i]] = kNegInf;
}

void apply_token_mask(std::span<float> logits, std::span<const uint64_t> allowed) {
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  const size_t n = logits.size();
  for (size_t word = 0; word * 64 < n; ++word) {
    const uint64_t bits = word < allowed.size() ? allowed[word] : 0;
    if (bits == ~uint64_t{0}) continue;  // a whole word allowed (inside strings: most of them)
    const size_t end = std::min(n, word * 64 + 64);
    for (size_t t = word * 64; t < end; ++t)
      if (!((bits >> (t - word * 64)) & 1)) logits[t] = kMasked;
  }
}

int32_t argmax(std::span<const float> logits) {
  int32_t best = -1;
  for (size_t i = 0; i < logits.size(); ++i)
    if (logits[i] > kNegInf && (best < 0 || logits[i] > logits[best]))
      best = static_cast<int32_t>(i);
  if (best < 0) fail("sampler: every one of the {} logits is -inf or NaN", logits.size());
  return best;
}

int32_t sample_at(std::span<const float> logits, double u) {
  const float top = max_finite(logits);
  if (top == kNegInf) fail("sampler: every one of the {} logits is -inf or NaN", logits.size());
  double total = 0;
  for (float l : logits) total += std::exp(static_cast<double>(l) - top);
  const double target = u * total;
  double cumulative = 0;
  int32_t last_possible = -1;
  for (size_t i = 0; i < logits.size(); ++i) {
    const double p = std::exp(static_cast<double>(logits[i]) - top);
    if (p == 0) continue;
    last_possible = static_cast<int32_t>(i);
    cumulative += p;
    if (cumulative > target) return last_possible;
  }
  return last_possible;  // u within rounding of 1
}

SampleLogprobs compute_logprobs(std::span<const float> logits, int32_t chosen, int n) {
  if (chosen < 0 || static_cast<size_t>(chosen) >= logits.size())
    fail("logprobs: chosen token {} is outside the {} logits", chosen, logits.size());
  const float top = max_finite(logits);
  double total = 0;
  for (float l : logits) total += std::exp(static_cast<double>(l) - top);
  const double log_normaliser = top + std::log(total);
  const auto logprob = [&](int32_t id) {
    return static_cast<float>(static_cast<double>(logits[id]) - log_normaliser);
  };
  SampleLogprobs out;
  out.chosen = {chosen, logprob(chosen)};
  if (n > 0) {
    std::vector<int32_t> ids;
    ids.reserve(logits.size());
    for (size_t i = 0; i < logits.size(); ++i)
      if (logits[i] > kNegInf) ids.push_back(static_cast<int32_t>(i));
    const size_t count = std::min(static_cast<size_t>(n), ids.size());
    std::partial_sort(ids.begin(), ids.begin() + count, ids.end(), MoreProbable{logits});
    for (size_t i = 0; i < count; ++i) out.top.push_back({ids[i], logprob(ids[i])});
  }
  return out;
}

double SampleRng::next_unit() {
  // splitmix64: a fixed, portable generator (std:: distributions differ between libraries).
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

// ---- Sampler ------------------------------------------------------------------------------------

Sampler::Sampler(const SamplingParams& params, std::span<const int32_t> prompt)
    : params_(params), history_(prompt), rng_(params.seed) {
  validate_sampling_params(params_);
}

SampleResult Sampler::sample(std::span<float> logits, bool want_logprobs) {
  for (size_t i = 0; i < logits.size(); ++i)
    if (std::isnan(logits[i])) fail("sampler: the logit of token {} is NaN", i);
  const bool raw_logprobs = want_logprobs && !params_.processed_logprobs;
  if (raw_logprobs) raw_.assign(logits.begin(), logits.end());

  apply_penalties(logits, history_, params_);
  SampleResult result;
  if (is_greedy(params_)) {
    result.token = argmax(logits);
  } else {
    apply_temperature(logits, params_.temperature);
    apply_min_p(logits, params_.min_p);
    apply_top_k(logits, params_.top_k);
    apply_top_p(logits, params_.top_p);
    result.token = sample_at(logits, rng_.next_unit());
  }
  if (want_logprobs)
    result.logprobs = compute_logprobs(raw_logprobs ? std::span<const float>(raw_) : logits,
                                       result.token, params_.top_logprobs);
  history_.add_output(result.token);
  return result;
}

}  // namespace minimax
