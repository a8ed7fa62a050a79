// The MoE router of M2 and M3 on the CPU: bit-identical to kernels/reference/router.cc (the same
// double scores and the same order of the top-k choice, ties to the lower expert id), choosing by
// insertion into the top-k instead of sorting every expert.
#include <cmath>
#include <vector>

#include "kernels/cpu/cpu_ops.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {

void cpu_route(const RouterArgs& a) {
  reference::check_router_args(a);
  thread_local std::vector<double> score, best_choice;
  thread_local std::vector<int> best;
  score.resize(a.num_experts);
  best_choice.resize(a.top_k);
  best.resize(a.top_k);
  for (int64_t t = 0; t < a.T; ++t) {
    const float* logits = a.logits + t * a.num_experts;
    int count = 0;
    for (int e = 0; e < a.num_experts; ++e) {
      const double s = 1.0 / (1.0 + std::exp(-static_cast<double>(logits[e])));
      const double choice = s + (a.selection_bias ? a.selection_bias[e] : 0.0);
      score[e] = s;
      if (count == a.top_k && !(choice > best_choice[count - 1])) continue;
      // Insert after every kept expert whose choice is >= this one: equal choices keep the lower
      // id first, as the reference's stable sort does.
      int at = count < a.top_k ? count : count - 1;
      while (at > 0 && best_choice[at - 1] < choice) {
        best_choice[at] = best_choice[at - 1];
        best[at] = best[at - 1];
        --at;
      }
      best_choice[at] = choice;
      best[at] = e;
      if (count < a.top_k) ++count;
    }
    reference::write_routing(a, t, best.data(), score.data());
  }
}

}  // namespace minimax
