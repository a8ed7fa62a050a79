// vLLM's spec_decode_* counters, kept the same way by the server's metrics, the generation loop's
// stepper and `bench --replay`.
#pragma once

#include <cstdint>
#include <vector>

namespace minimax {

struct SpecDecodeCounts {
  int64_t num_drafts = 0;  // verify steps that carried at least one draft token
  int64_t num_draft_tokens = 0;
  int64_t num_accepted_tokens = 0;
  std::vector<int64_t> accepted_per_pos;  // [i]: drafts whose token i was accepted
  int64_t forward_steps = 0;              // forward passes after the prefill (stepper only)

  // One verify step: `drafted` draft tokens, the first `accepted` of them right.
  void add_verify(int64_t drafted, int64_t accepted) {
    if (drafted <= 0) return;
    ++num_drafts;
    num_draft_tokens += drafted;
    num_accepted_tokens += accepted;
    if (accepted_per_pos.size() < static_cast<size_t>(drafted))
      accepted_per_pos.resize(static_cast<size_t>(drafted), 0);
    for (int64_t i = 0; i < accepted; ++i) ++accepted_per_pos[static_cast<size_t>(i)];
  }
  // Adds another run's counts (a replay's cases).
  void add(const SpecDecodeCounts& other) {
    num_drafts += other.num_drafts;
    num_draft_tokens += other.num_draft_tokens;
    num_accepted_tokens += other.num_accepted_tokens;
    forward_steps += other.forward_steps;
    if (accepted_per_pos.size() < other.accepted_per_pos.size())
      accepted_per_pos.resize(other.accepted_per_pos.size(), 0);
    for (size_t i = 0; i < other.accepted_per_pos.size(); ++i)
      accepted_per_pos[i] += other.accepted_per_pos[i];
  }
};

}  // namespace minimax
