// Counting sort of router assignments by expert.
#include "kernels/reference/moe_plan.h"

#include "base/error.h"

namespace minimax {

void plan_moe_into(const int32_t* expert_ids, const float* expert_weights, int64_t T, int top_k,
                   int num_experts, MoePlan& plan, int begin, int end) {
  if (end < 0) end = num_experts;
  plan.offsets.assign(num_experts + 1, 0);
  const int64_t n = T * top_k;
  auto held = [&](int32_t e) { return e >= begin && e < end; };
  for (int64_t i = 0; i < n; ++i) {
    const int32_t e = expert_ids[i];
    if (e < 0 || e >= num_experts)
      fail("moe: expert id {} of token {} slot {} is outside [0, {})", e, i / top_k, i % top_k,
           num_experts);
    if (held(e)) ++plan.offsets[e + 1];
  }
  for (int e = 0; e < num_experts; ++e) plan.offsets[e + 1] += plan.offsets[e];
  const int64_t kept = plan.offsets[num_experts];
  plan.tokens.resize(kept);
  plan.slots.resize(kept);
  plan.weights.resize(kept);
  plan.active.clear();
  for (int e = 0; e < num_experts; ++e)
    if (plan.count(e) > 0) plan.active.push_back(e);
  // Fill each expert's list in slot order (= token order); the next free place of expert e is
  // tracked in offsets[e] and the offsets are shifted back afterwards.
  for (int64_t i = 0; i < n; ++i) {
    if (!held(expert_ids[i])) continue;
    const int32_t at = plan.offsets[expert_ids[i]]++;
    plan.tokens[at] = static_cast<int32_t>(i / top_k);
    plan.slots[at] = static_cast<int32_t>(i);
    plan.weights[at] = expert_weights[i];
  }
  for (int e = num_experts; e > 0; --e) plan.offsets[e] = plan.offsets[e - 1];
  plan.offsets[0] = 0;
}

MoePlan plan_moe(const int32_t* expert_ids, const float* expert_weights, int64_t T, int top_k,
                 int num_experts, int begin, int end) {
  MoePlan plan;
  plan_moe_into(expert_ids, expert_weights, T, top_k, num_experts, plan, begin, end);
  return plan;
}

}  // namespace minimax
