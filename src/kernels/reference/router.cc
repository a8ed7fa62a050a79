// Reference MoE router of M2 and M3: sigmoid scores, the expert choice on score + the
// e_score_correction_bias (the bias only chooses), the unbiased scores of the chosen experts as
// weights, renormalised, times routed_scaling_factor (M3: 2.0). spec/model.md §2.7 and §5.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "base/error.h"
#include "kernels/reference/reference_ops.h"

namespace minimax::reference {
namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

void check_router_args(const RouterArgs& a) {
  if (a.top_k <= 0 || a.top_k > a.num_experts)
    fail("router: top_k {} must be in [1, {}]", a.top_k, a.num_experts);
}

void write_routing(const RouterArgs& a, int64_t t, const int* chosen, const double* score) {
  double sum = 0;
  for (int j = 0; j < a.top_k; ++j) sum += score[chosen[j]];
  for (int j = 0; j < a.top_k; ++j) {
    const double w = a.renormalize ? score[chosen[j]] / sum : score[chosen[j]];
    a.expert_ids[t * a.top_k + j] = chosen[j];
    a.expert_weights[t * a.top_k + j] = static_cast<float>(w * a.routed_scale);
  }
}

void route(const RouterArgs& a) {
  check_router_args(a);
  std::vector<double> s(a.num_experts), choice(a.num_experts);
  std::vector<int> order(a.num_experts);
  for (int64_t t = 0; t < a.T; ++t) {
    for (int e = 0; e < a.num_experts; ++e) {
      s[e] = sigmoid(a.logits[t * a.num_experts + e]);
      choice[e] = s[e] + (a.selection_bias ? a.selection_bias[e] : 0.0);
    }
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int x, int y) { return choice[x] > choice[y]; });
    write_routing(a, t, order.data(), s.data());
  }
}

}  // namespace minimax::reference
