// Token sampling over one row of logits with vLLM's semantics: penalties on the raw logits, then
// greedy (argmax) or temperature → min-p → top-k → top-p → a seeded draw. Each step is a pure
// function over a logits vector (masked entries become -inf) so it can be tested by hand; Sampler
// strings them together and owns the per-request random stream.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

namespace minimax {

struct SamplingParams {
  // 0 (below 1e-5, vLLM's epsilon) = greedy: the highest logit after penalties, ties to the
  // lowest id. Otherwise logits are divided by it before the filters.
  float temperature = 1.0f;
  int top_k = 0;       // keep the k highest logits (ties at the k-th kept); 0 or -1 = off
  float top_p = 1.0f;  // keep the smallest most-probable set with mass >= p; 1 = off
  float min_p = 0.0f;  // drop tokens with prob < min_p · max prob; 0 = off
  float repetition_penalty = 1.0f;  // over prompt + output tokens; 1 = off
  float presence_penalty = 0.0f;    // over output tokens; 0 = off
  float frequency_penalty = 0.0f;   // over output tokens; 0 = off
  uint64_t seed = 0;                // the random stream of one request
  int top_logprobs = 0;             // alternatives reported per token (0 = chosen token only)
  // Logprobs are computed from the raw logits (vLLM's default "raw_logprobs"), or from the
  // processed ones (after penalties, temperature and the filters; filtered tokens are -inf).
  bool processed_logprobs = false;
};

// Values a request (or a command line) sets over the checkpoint's defaults; unset ones keep them.
struct SamplingOverrides {
  std::optional<float> temperature, top_p, min_p, repetition_penalty, presence_penalty,
      frequency_penalty;
  std::optional<int> top_k;
  std::optional<uint64_t> seed;
};
SamplingParams apply_overrides(SamplingParams defaults, const SamplingOverrides& overrides);

// Throws Error naming the parameter (e.g. "top_p") when a value is out of its range.
void validate_sampling_params(const SamplingParams& params);
bool is_greedy(const SamplingParams& params);

// Tokens seen so far, counted the way the penalties need them.
class TokenHistory {
 public:
  TokenHistory() = default;
  explicit TokenHistory(std::span<const int32_t> prompt);
  void add_output(int32_t token);
  // Ids in the prompt or the output (each once), for the repetition penalty.
  const std::vector<int32_t>& seen() const { return seen_; }
  // (id, count) over output tokens, for presence and frequency penalties.
  const std::vector<std::pair<int32_t, int32_t>>& output_counts() const { return output_counts_; }

 private:
  void mark_seen(int32_t token);
  std::vector<int32_t> seen_;
  std::vector<std::pair<int32_t, int32_t>> output_counts_;
  // id → 1 + its index in output_counts_ (0 = only in the prompt), for every seen id.
  std::unordered_map<int32_t, size_t> index_;
};

// ---- The steps, each in place on one logits row --------------------------------------------

// Repetition: logit / r if positive, logit · r otherwise, for every seen id. Presence and
// frequency: logit −= presence·[count > 0] + frequency·count over output ids. Ids outside the
// row are ignored (a token the tokenizer has but the logits row lacks cannot be penalised).
void apply_penalties(std::span<float> logits, const TokenHistory& history,
                     const SamplingParams& params);
void apply_temperature(std::span<float> logits, float temperature);
// Masks tokens whose probability under softmax(logits) is below min_p · the largest probability.
void apply_min_p(std::span<float> logits, float min_p);
// Masks every logit below the k-th largest (ties with it are kept, as vLLM does).
void apply_top_k(std::span<float> logits, int k);
// Keeps the most probable tokens, in order of probability (ties to the lower id), up to and
// including the first one at which the cumulative probability reaches p; masks the rest.
void apply_top_p(std::span<float> logits, float top_p);
// Grammar-constrained decoding: masks every token whose bit in `allowed` is clear (bit t is word
// t / 64, bit t % 64; ids past the mask are masked).
void apply_token_mask(std::span<float> logits, std::span<const uint64_t> allowed);

// The highest logit's id, ties to the lowest. Error when every entry is -inf or NaN.
int32_t argmax(std::span<const float> logits);
// Inverse CDF of softmax(logits) in id order at u ∈ [0, 1): the token whose cumulative interval
// holds u. Masked (-inf) entries have probability 0 and are never returned.
int32_t sample_at(std::span<const float> logits, double u);

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0;
};
struct SampleLogprobs {
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;  // `n` most probable, descending, ties to the lower id
};
// log_softmax(logits) at `chosen` and its top `n` entries.
SampleLogprobs compute_logprobs(std::span<const float> logits, int32_t chosen, int n);

// Deterministic stream of doubles in [0, 1) (splitmix64): same seed, same draws on any machine.
class SampleRng {
 public:
  explicit SampleRng(uint64_t seed) : state_(seed) {}
  double next_unit();

 private:
  uint64_t state_;
};

struct SampleResult {
  int32_t token = 0;
  SampleLogprobs logprobs;  // filled when `want_logprobs`
};

// One request's sampler: parameters, history and random stream.
class Sampler {
 public:
  Sampler(const SamplingParams& params, std::span<const int32_t> prompt);

  // Picks the next token from `logits` (modified in place: penalties, scaling, masks) and records
  // it in the history.
  SampleResult sample(std::span<float> logits, bool want_logprobs = false);

  const SamplingParams& params() const { return params_; }

 private:
  SamplingParams params_;
  TokenHistory history_;
  SampleRng rng_;
  std::vector<float> raw_;  // copy of the raw logits when raw logprobs are wanted
};

}  // namespace minimax
