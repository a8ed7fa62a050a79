// Reading prompt_logprobs into per-position facts and tallying agreement and loss.
#include "gates/agreement.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "base/error.h"

namespace minimax::gates {
namespace {

using json = nlohmann::json;

struct Candidate {
  int64_t id;
  double logprob;
  int64_t rank;
};

std::vector<Candidate> read_candidates(const json& entry, std::string_view source, size_t i) {
  if (!entry.is_object() || entry.empty())
    fail("{}: prompt_logprobs[{}] is not a non-empty object", source, i);
  std::vector<Candidate> out;
  for (const auto& [key, value] : entry.items()) {
    Candidate candidate{};
    const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), candidate.id);
    if (error != std::errc() || end != key.data() + key.size())
      fail("{}: prompt_logprobs[{}] key \"{}\" is not a token id", source, i, key);
    if (!value.is_object() || !value.contains("logprob") || !value["logprob"].is_number() ||
        !value.contains("rank") || !value["rank"].is_number_integer())
      fail("{}: prompt_logprobs[{}][\"{}\"] needs a numeric logprob and an integer rank", source, i,
           key);
    candidate.logprob = value["logprob"].get<double>();
    candidate.rank = value["rank"].get<int64_t>();
    if (!std::isfinite(candidate.logprob))
      fail("{}: prompt_logprobs[{}][\"{}\"].logprob is not finite", source, i, key);
    out.push_back(candidate);
  }
  return out;
}

}  // namespace

std::vector<PromptPosition> read_prompt_positions(const json& prompt_logprobs,
                                                  const json* prompt_token_ids,
                                                  std::string_view source) {
  if (!prompt_logprobs.is_array() || prompt_logprobs.empty())
    fail("{}: prompt_logprobs is not a non-empty list", source);
  if (prompt_token_ids != nullptr &&
      (!prompt_token_ids->is_array() || prompt_token_ids->size() != prompt_logprobs.size()))
    fail("{}: prompt_token_ids has {} entries, prompt_logprobs {}", source,
         prompt_token_ids->is_array() ? prompt_token_ids->size() : 0, prompt_logprobs.size());
  std::vector<PromptPosition> positions;
  for (size_t i = 1; i < prompt_logprobs.size(); ++i) {
    const std::vector<Candidate> candidates = read_candidates(prompt_logprobs[i], source, i);
    PromptPosition position;
    const Candidate* top = nullptr;
    for (const Candidate& c : candidates)
      if (c.rank == 1) top = &c;
    if (top == nullptr) fail("{}: prompt_logprobs[{}] has no rank-1 entry", source, i);
    position.top_id = top->id;
    position.top_logprob = top->logprob;
    const Candidate* actual = nullptr;
    if (prompt_token_ids != nullptr) {
      const json& id = (*prompt_token_ids)[i];
      if (!id.is_number_integer()) fail("{}: prompt_token_ids[{}] is not an integer", source, i);
      for (const Candidate& c : candidates)
        if (c.id == id.get<int64_t>()) actual = &c;
      if (actual == nullptr)
        fail("{}: prompt_logprobs[{}] has no entry for the prompt token {}", source, i,
             id.get<int64_t>());
    } else if (candidates.size() == 1) {
      actual = top;
    } else if (candidates.size() == 2) {
      actual = &candidates[0] == top ? &candidates[1] : &candidates[0];
      if (actual->rank == 1)
        fail(
            "{}: prompt_logprobs[{}] has two rank-1 entries; the prompt token is ambiguous "
            "(request prompt_logprobs 1)",
            source, i);
    } else {
      fail(
          "{}: prompt_logprobs[{}] has {} entries; cannot tell the prompt token without "
          "prompt_token_ids (request prompt_logprobs 1)",
          source, i, candidates.size());
    }
    position.actual_id = actual->id;
    position.actual_logprob = actual->logprob;
    positions.push_back(position);
  }
  return positions;
}

void AgreementTally::add(const std::vector<PromptPosition>& a, const std::vector<PromptPosition>& b,
                         std::string_view source) {
  if (a.size() != b.size())
    fail("{}: the servers tokenized the text differently ({} vs {} positions)", source, a.size(),
         b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].actual_id != b[i].actual_id)
      fail("{}: the servers tokenized the text differently (token {} vs {} at position {})", source,
           a[i].actual_id, b[i].actual_id, i + 1);
    ++positions_;
    const bool same = a[i].top_id == b[i].top_id;
    if (same) ++same_top_;
    if (std::max(a[i].top_logprob, b[i].top_logprob) >= std::log(kDecidedProbability)) {
      ++decided_;
      if (same) ++decided_same_top_;
    }
    loss_a_ -= a[i].actual_logprob;
    loss_b_ -= b[i].actual_logprob;
  }
}

double AgreementTally::agreement() const {
  return positions_ == 0 ? 0.0 : static_cast<double>(same_top_) / static_cast<double>(positions_);
}

double AgreementTally::decided_agreement() const {
  return decided_ == 0 ? 0.0
                       : static_cast<double>(decided_same_top_) / static_cast<double>(decided_);
}

double AgreementTally::mean_loss_a() const {
  return positions_ == 0 ? 0.0 : loss_a_ / static_cast<double>(positions_);
}

double AgreementTally::mean_loss_b() const {
  return positions_ == 0 ? 0.0 : loss_b_ / static_cast<double>(positions_);
}

double AgreementTally::loss_delta() const { return std::abs(mean_loss_a() - mean_loss_b()); }

}  // namespace minimax::gates
