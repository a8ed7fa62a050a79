// The per-expert token lists of one MoE call ("plan, then run"): built once from the router's
// output, read by every backend's grouped MoE.
#pragma once

#include <cstdint>
#include <vector>

namespace minimax {

struct MoePlan {
  // Assignments of expert e are [offsets[e], offsets[e + 1]) in the lists below, tokens ascending.
  std::vector<int32_t> offsets;  // [num_experts + 1]
  std::vector<int32_t> tokens;   // token index of each assignment
  std::vector<int32_t> slots;    // t · top_k + j: where the assignment sits in the router output
  std::vector<float> weights;    // routing weight of each assignment
  std::vector<int32_t> active;   // experts with at least one token, ascending

  int32_t count(int expert) const { return offsets[expert + 1] - offsets[expert]; }
};

// Groups the router output ([T, top_k] ids and weights) by expert, keeping only experts in
// [begin, end) (end < 0: all; the experts this rank holds under expert parallelism). Throws Error
// naming the token and slot when an id is outside [0, num_experts).
MoePlan plan_moe(const int32_t* expert_ids, const float* expert_weights, int64_t T, int top_k,
                 int num_experts, int begin = 0, int end = -1);
// The same, written into `plan` and reusing its storage (no allocation once it has grown): the
// CPU backend's per-call form.
void plan_moe_into(const int32_t* expert_ids, const float* expert_weights, int64_t T, int top_k,
                   int num_experts, MoePlan& plan, int begin = 0, int end = -1);

}  // namespace minimax
