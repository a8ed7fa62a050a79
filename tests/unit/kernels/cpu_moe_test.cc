// The CPU grouped MoE (kernels/cpu/cpu_ops.h cpu_moe) against reference::moe under a derived error
// bound (the op table, tests/backend_ops/, runs the tiny and real M2 / M3 shapes): every weight
// format, odd shapes, decode and batches large enough for several
// passes per expert and several waves, the bf16 (dequant) path and FP8 activation emulation; bit
// equality across thread counts; the reusable plan against plan_moe.
//
// Bound, per output element (linearised error propagation, then doubled), with u = 2^-24 and
// γ(n) = (n/8 + 32)·u the cpu_linear bound factor over n columns:
//   gate/up row i:   δg_i = γ(H)·Σ_h|Wg_ih·x_h|, δu_i likewise
//   activation:      δa_i = |∂a/∂g|·δg_i + |∂a/∂u|·δu_i + 8u·|a_i|
//                    (silu: |∂a/∂g| <= 1.1|u|, |∂a/∂u| = |g·σ(g)|; SwiGLU-OAI with g' = min(g, L),
//                    u' = clamp(u): |∂a/∂g| <= (σ + α|g'|σ(1 − σ))·|u' + β|, |∂a/∂u| <= |g'·σ|)
//   down row c:      δd_c = γ(I)·Σ_i|Wd_ci·a_i| + Σ_i|Wd_ci|·δa_i
//   y[t, c]:         Σ_j |w_j|·(δd_jc + (k + 1)·u·|d_jc|)   (k = top_k f32 additions)
// The bf16 path and FP8 emulation round intermediate values; where the two backends' values sit on
// either side of a rounding boundary they differ by one step of that format, so those tests also
// allow one step (2^-7 relative for bf16, 2^-3 relative plus the subnormal step for e4m3) at
// every rounding point, and check that at least 99% of the elements meet the plain bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "formats/float_formats.h"
#include "kernel_test_util.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/reference/moe_plan.h"
#include "kernels/reference/reference_ops.h"
#include "kernels/reference/weight_rows.h"
#include "random_weights.h"

namespace minimax {
namespace {

// ---- Problems -----------------------------------------------------------------------------------

struct MoeCase {
  std::string name;
  WeightFormat format;
  int64_t hidden, inter;
  int num_experts, top_k;
  int64_t T;
  GluKind act = GluKind::kSilu;
  int distinct = 4;  // distinct weight sets; expert e uses set e % distinct
  bool bf16 = false;
  ActQuantKind quant = ActQuantKind::kNone;
};

struct MoeProblem {
  std::vector<StoredWeight> sets;  // [distinct][gate, up, down]
  std::vector<ExpertWeights> experts;
  std::vector<float> x, weights;
  std::vector<int32_t> ids;
  MoeArgs args(const MoeCase& c, float* y) const {
    MoeArgs a;
    a.experts = experts.data();
    a.num_experts = c.num_experts;
    a.hidden = c.hidden;
    a.inter = c.inter;
    a.x = x.data();
    a.T = c.T;
    a.expert_ids = ids.data();
    a.expert_weights = weights.data();
    a.top_k = c.top_k;
    a.act.kind = c.act;
    a.bf16_activations = c.bf16;
    a.down_input_quant.kind = c.quant;
    a.down_input_quant.fixed_scale = 56.0f / 448.0f;
    a.y = y;
    return a;
  }
};

MoeProblem make_moe_problem(const MoeCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  MoeProblem p;
  const int distinct = std::min(c.distinct, c.num_experts);
  // Scales that keep the activations O(1): the SwiGLU-OAI clamps at ±7 are reached sometimes.
  const double sd_in = 2.0 / std::sqrt(double(c.hidden)), sd_out = 1.0 / std::sqrt(double(c.inter));
  for (int s = 0; s < distinct; ++s) {
    p.sets.push_back(random_weight(c.format, c.inter, c.hidden, sd_in, rng));
    p.sets.push_back(random_weight(c.format, c.inter, c.hidden, sd_in, rng));
    p.sets.push_back(random_weight(c.format, c.hidden, c.inter, sd_out, rng));
  }
  for (int e = 0; e < c.num_experts; ++e) {
    const int s = e % distinct;
    p.experts.push_back({p.sets[3 * s].view, p.sets[3 * s + 1].view, p.sets[3 * s + 2].view});
  }
  std::normal_distribution<float> dist(0.0f, 1.5f);
  p.x.resize(c.T * c.hidden);
  for (float& v : p.x) v = dist(rng);
  std::uniform_real_distribution<float> weight(0.05f, 0.6f);
  std::vector<int32_t> order(c.num_experts);
  for (int64_t t = 0; t < c.T; ++t) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (int j = 0; j < c.top_k; ++j) {
      p.ids.push_back(order[j]);
      p.weights.push_back(weight(rng));
    }
  }
  return p;
}

float bf16_round(float v) { return bf16_to_f32(f32_to_bf16(v)); }

// The bound of the file comment per output element; with `steps`, also one rounding step of the
// bf16 / FP8 path at every rounding point (the "loose" bound).
std::vector<double> moe_bound(const MoeCase& c, const MoeProblem& p, bool steps) {
  const int64_t H = c.hidden, I = c.inter;
  const double gH = (H / 8.0 + 32) * kU, gI = (I / 8.0 + 32) * kU;
  const double bf16_step = c.bf16 && steps ? 0x1p-7 : 0.0;
  const double fp8_step = c.quant != ActQuantKind::kNone && steps ? 0x1p-3 : 0.0;
  const double alpha = 1.702, limit = 7.0, beta = 1.0;
  std::vector<double> bound(c.T * H, 0.0);
  const MoePlan plan = plan_moe(p.ids.data(), p.weights.data(), c.T, c.top_k, c.num_experts);
  std::vector<double> row(std::max(H, I));
  for (int e : plan.active) {
    const ExpertWeights& w = p.experts[e];
    const int64_t n = plan.count(e), first = plan.offsets[e];
    std::vector<double> a(n * I), da(n * I);
    std::vector<double> g(n * I), G(n * I), u(n * I), U(n * I);
    for (int64_t i = 0; i < I; ++i) {
      for (int which = 0; which < 2; ++which) {
        reference::decode_row(which == 0 ? w.gate : w.up, i, row.data());
        for (int64_t k = 0; k < n; ++k) {
          const float* x = p.x.data() + int64_t(plan.tokens[first + k]) * H;
          double dot = 0, mag = 0;
          for (int64_t h = 0; h < H; ++h) {
            const double xv = c.bf16 ? bf16_round(x[h]) : x[h];
            dot += row[h] * xv;
            mag += std::fabs(row[h] * xv);
          }
          (which == 0 ? g : u)[k * I + i] = dot;
          (which == 0 ? G : U)[k * I + i] = mag;
        }
      }
    }
    for (int64_t k = 0; k < n; ++k) {
      // FP8 emulation scale of this row: the fixed scale, or amax/448 per token.
      double amax = 0;
      for (int64_t i = 0; i < I; ++i) {
        const double gv = g[k * I + i], uv = u[k * I + i];
        double av, dg, du;
        if (c.act == GluKind::kSilu) {
          const double s = 1 / (1 + std::exp(-gv));
          av = gv * s * uv;
          dg = 1.1 * std::fabs(uv);
          du = std::fabs(gv * s);
        } else {
          const double gc = std::min(gv, limit), uc = std::clamp(uv, -limit, limit);
          const double s = 1 / (1 + std::exp(-alpha * gc));
          av = gc * s * (uc + beta);
          dg = (s + alpha * std::fabs(gc) * s * (1 - s)) * std::fabs(uc + beta);
          du = std::fabs(gc * s);
        }
        const double dgv = gH * G[k * I + i] + bf16_step * std::fabs(gv);
        const double duv = gH * U[k * I + i] + bf16_step * std::fabs(uv);
        a[k * I + i] = av;
        da[k * I + i] = dg * dgv + du * duv + (8 * kU + bf16_step + fp8_step) * std::fabs(av);
        amax = std::max(amax, std::fabs(av));
      }
      if (fp8_step > 0) {
        const double scale = c.quant == ActQuantKind::kFp8FixedScale ? 56.0 / 448 : amax / 448;
        for (int64_t i = 0; i < I; ++i) da[k * I + i] += 0x1p-9 * scale;
      }
    }
    for (int64_t col = 0; col < H; ++col) {
      reference::decode_row(w.down, col, row.data());
      for (int64_t k = 0; k < n; ++k) {
        double d = 0, mag = 0, prop = 0;
        for (int64_t i = 0; i < I; ++i) {
          d += row[i] * a[k * I + i];
          mag += std::fabs(row[i] * a[k * I + i]);
          prop += std::fabs(row[i]) * da[k * I + i];
        }
        const double dd =
            gI * mag + prop + (c.top_k + 1) * kU * std::fabs(d) + bf16_step * std::fabs(d);
        bound[int64_t(plan.tokens[first + k]) * H + col] +=
            std::fabs(p.weights[plan.slots[first + k]]) * dd;
      }
    }
  }
  for (double& b : bound) b = 2 * b + 1e-30;
  return bound;
}

// Compares cpu_moe (2 threads) with reference::moe under the bound.
void expect_matches_reference(const MoeCase& c, const MoeProblem& p) {
  std::vector<float> ref(c.T * c.hidden), got(c.T * c.hidden, NAN);
  reference::moe(p.args(c, ref.data()), nullptr);
  ThreadPool pool(2);
  cpu_moe(p.args(c, got.data()), &pool);
  const bool rounding_path = c.bf16 || c.quant != ActQuantKind::kNone;
  const std::vector<double> tight = moe_bound(c, p, false);
  const std::vector<double> loose = rounding_path ? moe_bound(c, p, true) : tight;
  int64_t within_tight = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double diff = std::fabs(double(got[i]) - ref[i]);
    ASSERT_LE(diff, loose[i]) << c.name << " at token " << i / c.hidden << " column "
                              << i % c.hidden << ": cpu " << got[i] << ", reference " << ref[i];
    within_tight += diff <= tight[i];
  }
  if (rounding_path) {
    EXPECT_GE(within_tight, static_cast<int64_t>(0.99 * got.size())) << c.name;
  }
}

void expect_matches_reference(const MoeCase& c, uint32_t seed) {
  expect_matches_reference(c, make_moe_problem(c, seed));
}

std::vector<MoeCase> format_cases() {
  std::vector<MoeCase> cases;
  const struct {
    WeightFormat f;
    const char* name;
    int64_t H, I;
  } formats[] = {{WeightFormat::kF32, "f32", 389, 203},
                 {WeightFormat::kBF16, "bf16", 389, 203},
                 {WeightFormat::kFp8Channel, "fp8_channel", 389, 203},
                 {WeightFormat::kFp8Block, "fp8_block", 389, 300},  // partial 128x128 tiles
                 {WeightFormat::kMxfp4, "mxfp4", 512, 320},
                 {WeightFormat::kNvfp4, "nvfp4", 512, 320},
                 {WeightFormat::kMxfp8, "mxfp8", 512, 320}};
  // Large enough that both phases split every projection between the 2 threads (row slices of
  // every format are read). 300 tokens (two formats; the batching does not depend on the format):
  // ~150 per expert, so several calls per expert (items of at most 128) and several waves.
  for (const auto& f : formats)
    for (int64_t T : {1, 5, 300})
      if (T < 300 || f.f == WeightFormat::kFp8Channel || f.f == WeightFormat::kMxfp4)
        cases.push_back({std::string(f.name) + "_T" + std::to_string(T), f.f, f.H, f.I, 8, 4, T});
  return cases;
}

TEST(CpuMoe, EveryFormatWithinBoundOfTheReference) {
  uint32_t seed = 1;
  for (const MoeCase& c : format_cases()) expect_matches_reference(c, seed++);
}

TEST(CpuMoe, ExpertsInDifferentFormats) {
  // Half the experts per channel (slices on any 16 rows), half in 128-row tiles: every thread
  // slice must start on a tile boundary, whichever expert comes first.
  for (int first : {0, 1}) {
    MoeCase c{"mixed", WeightFormat::kFp8Block, 389, 300, 8, 4, 5};
    MoeProblem p = make_moe_problem(c, 95);
    MoeCase other = c;
    other.format = WeightFormat::kFp8Channel;
    const MoeProblem q = make_moe_problem(other, 96);
    for (int e = first; e < c.num_experts; e += 2) p.experts[e] = q.experts[e];
    expect_matches_reference(c, p);
  }
}

TEST(CpuMoe, DequantPathRoundsToBf16WhereTheReferenceDoes) {
  for (int64_t T : {1, 6, 90}) {
    MoeCase c{"bf16_path", WeightFormat::kBF16, 96, 64, 8, 3, T, GluKind::kSwigluOai};
    c.bf16 = true;
    expect_matches_reference(c, 70 + T);
  }
}

TEST(CpuMoe, Fp8EmulationOfTheDownInput) {
  for (ActQuantKind q : {ActQuantKind::kFp8FixedScale, ActQuantKind::kFp8PerToken}) {
    MoeCase c{"fp8_down_input", WeightFormat::kFp8Channel, 96, 64, 8, 3, 7, GluKind::kSwigluOai};
    c.quant = q;
    expect_matches_reference(c, 80);
    // The emulation changes the result (so the check above could tell it was skipped).
    const MoeProblem p = make_moe_problem(c, 80);
    std::vector<float> with(c.T * c.hidden), without(c.T * c.hidden);
    cpu_moe(p.args(c, with.data()), nullptr);
    c.quant = ActQuantKind::kNone;
    cpu_moe(p.args(c, without.data()), nullptr);
    EXPECT_NE(with, without);
  }
}

TEST(CpuMoe, ThreadCountDoesNotChangeTheResult) {
  for (const MoeCase& c :
       {MoeCase{"fp8_block", WeightFormat::kFp8Block, 200, 272, 8, 3, 1},
        MoeCase{"fp8_block_batch", WeightFormat::kFp8Block, 200, 272, 8, 3, 40},
        MoeCase{"bf16_big", WeightFormat::kBF16, 512, 384, 8, 2, 1, GluKind::kSwigluOai},
        MoeCase{"nvfp4_batch", WeightFormat::kNvfp4, 256, 512, 6, 2, 100}}) {
    const MoeProblem p = make_moe_problem(c, 90);
    std::vector<float> one(c.T * c.hidden);
    cpu_moe(p.args(c, one.data()), nullptr);
    for (size_t threads : {2, 3, 7}) {
      ThreadPool pool(threads);
      std::vector<float> many(c.T * c.hidden);
      cpu_moe(p.args(c, many.data()), &pool);
      EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0)
          << c.name << " with " << threads << " threads";
    }
  }
}

// plan_moe_into reusing one plan's storage across calls of different sizes gives what fresh
// storage gives (no stale entries from a bigger earlier call).
TEST(CpuMoe, PlanMatchesPlanMoeAndReusesItsStorage) {
  MoePlan plan;
  for (int64_t T : {40, 3, 0, 17}) {
    std::mt19937 rng(static_cast<uint32_t>(T));
    const int experts = 9, k = 3;
    std::vector<int32_t> ids(T * k);
    std::vector<float> weights(T * k);
    for (auto& id : ids) id = static_cast<int32_t>(rng() % experts);  // repeats allowed
    for (auto& w : weights) w = static_cast<float>(rng() % 100) / 7;
    const MoePlan expected = plan_moe(ids.data(), weights.data(), T, k, experts);
    plan_moe_into(ids.data(), weights.data(), T, k, experts, plan);
    EXPECT_EQ(plan.offsets, expected.offsets);
    EXPECT_EQ(plan.tokens, expected.tokens);
    EXPECT_EQ(plan.slots, expected.slots);
    EXPECT_EQ(plan.weights, expected.weights);
    EXPECT_EQ(plan.active, expected.active);
  }
  const int32_t bad[2] = {0, 9};
  const float w[2] = {1, 1};
  EXPECT_THROW(plan_moe_into(bad, w, 1, 2, 9, plan), Error);
}

TEST(CpuMoe, RejectsMisshapenExperts) {
  MoeCase c{"shapes", WeightFormat::kF32, 32, 16, 4, 2, 3};
  MoeProblem p = make_moe_problem(c, 5);
  for (auto& e : p.experts) e.down.rows = 31;
  std::vector<float> y(c.T * c.hidden);
  EXPECT_THROW(cpu_moe(p.args(c, y.data()), nullptr), Error);
}

}  // namespace
}  // namespace minimax
