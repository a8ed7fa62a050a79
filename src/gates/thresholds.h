// Every threshold of `minimax gates`, in one place (docs/gates.md explains each choice). A gate's
// row in the table prints the threshold it was held to.
#pragma once

#include <cstddef>

#include "gates/repetition.h"

namespace minimax::gates {

struct Thresholds {
  // Golden prompts: every greedy answer equals the expected content exactly.
  double golden_min_fraction = 1.0;
  // Greedy loops: prompts run, loops allowed, and what counts as a loop.
  size_t loop_prompts = 10;
  size_t loops_allowed = 0;
  LoopParams loop;
  // Needles: fraction of asked needles whose value is answered exactly.
  double needles_min_fraction = 0.9;
  // Arithmetic: fresh problems from --seed, fraction answered exactly.
  size_t arithmetic_problems = 50;
  double arithmetic_min_fraction = 0.9;
  // Logprobs: top list size requested, and the tolerance (nats) for sorted/equal comparisons
  // (servers print float32 logprobs; 1e-3 covers their rounding, not a wrong token).
  int top_logprobs = 5;
  double logprob_tolerance = 1e-3;
  size_t logprob_problems_allowed = 0;
  // Tool calls: problems run; every call and every round-trip answer must be right.
  size_t tool_problems = 4;
  double tool_min_fraction = 1.0;
  // Two servers: teacher-forced top-1 agreement over decided positions (agreement.h), the
  // |difference of mean loss| over all positions (nats/token), and the fraction of golden prompts
  // with identical greedy answers.
  double agreement_min = 0.97;
  double loss_delta_max = 0.05;
  double compare_golden_min_fraction = 1.0;
  // Generation budget per request: the spec says 160 tokens suffice for every task.
  int max_tokens = 256;
};

}  // namespace minimax::gates
