// Reference router (bias for the choice only, ties, renormalisation, routed scale), gated
// activations (SiLU, SwiGLU-OAI clamps and +1), FP8 activation emulation, the MoE plan and the
// grouped MoE against a naive per-token loop.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/error.h"
#include "formats/float_formats.h"
#include "kernels/reference/moe_plan.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace {

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

TEST(ReferenceRouter, BiasChoosesButDoesNotWeigh) {
  // Scores s = sigmoid(logits); the bias lifts expert 3 into the top 2 although its score is
  // lowest, and the weights are the unbiased scores renormalised.
  const float logits[4] = {2.0f, 1.0f, 0.0f, -1.0f};
  const float bias[4] = {0, 0, 0, 1.0f};
  int32_t ids[2];
  float weights[2];
  RouterArgs r;
  r.logits = logits;
  r.T = 1;
  r.num_experts = 4;
  r.top_k = 2;
  r.selection_bias = bias;
  r.expert_ids = ids;
  r.expert_weights = weights;
  reference::route(r);
  // choice: 0.881, 0.731, 0.5, 1.269 → expert 3 first, then 0.
  EXPECT_EQ(ids[0], 3);
  EXPECT_EQ(ids[1], 0);
  const double s3 = sigmoid(-1), s0 = sigmoid(2);
  EXPECT_NEAR(weights[0], s3 / (s3 + s0), 1e-7);
  EXPECT_NEAR(weights[1], s0 / (s3 + s0), 1e-7);
  r.routed_scale = 2.0f;  // M3: the routed sum × 2
  reference::route(r);
  EXPECT_NEAR(weights[0] + weights[1], 2.0, 1e-6);
  r.renormalize = false;
  r.routed_scale = 1.0f;
  reference::route(r);
  EXPECT_NEAR(weights[0], s3, 1e-7);
}

TEST(ReferenceRouter, TiesGoToTheLowerExpert) {
  const float logits[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  int32_t ids[2];
  float weights[2];
  RouterArgs r;
  r.logits = logits;
  r.T = 1;
  r.num_experts = 4;
  r.top_k = 2;
  r.expert_ids = ids;
  r.expert_weights = weights;
  reference::route(r);
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[1], 1);
  EXPECT_FLOAT_EQ(weights[0], 0.5f);
}

TEST(ReferenceGlu, SiluAndSwigluOaiHandValues) {
  const float gate[4] = {1.0f, 10.0f, -10.0f, 2.0f};
  const float up[4] = {2.0f, 0.5f, 1.0f, -9.0f};
  float out[4];
  reference::glu(gate, up, 4, GluParams{}, out);
  EXPECT_NEAR(out[0], 1 * sigmoid(1) * 2, 1e-6);
  GluParams oai{GluKind::kSwigluOai, 1.702f, 7.0f, 1.0f};
  reference::glu(gate, up, 4, oai, out);
  EXPECT_NEAR(out[0], 1 * sigmoid(1.702) * (2 + 1), 1e-6);
  EXPECT_NEAR(out[1], 7 * sigmoid(1.702 * 7) * (0.5 + 1), 1e-5);    // g clamped above
  EXPECT_NEAR(out[2], -10 * sigmoid(-1.702 * 10) * (1 + 1), 1e-6);  // not below
  EXPECT_NEAR(out[3], 2 * sigmoid(1.702f * 2) * (-7 + 1), 1e-5);    // u clamped to -7
}

TEST(ReferenceActivationQuant, PerTokenGroupAndFixedScale) {
  // Per token: the row's amax lands on 448; 0.3 / (2/448) = 67.2 rounds to the e4m3 value 64.
  std::vector<float> x = {2.0f, 1.0f, 0.3f, -0.5f};
  reference::quantize_activations(x.data(), 1, 4,
                                  ActQuant{ActQuantKind::kFp8PerToken, 128, 0, 448.0f});
  const float scale = 2.0f / 448.0f;
  EXPECT_FLOAT_EQ(x[0], 2.0f);
  EXPECT_FLOAT_EQ(x[1], 1.0f);
  EXPECT_FLOAT_EQ(x[2], 64 * scale);
  EXPECT_FLOAT_EQ(x[3], -0.5f);
  // Groups of 2: each pair has its own scale, so 0.3 next to 0.3 stays (almost) exact.
  std::vector<float> g = {4.0f, 0.3f, 0.3f, 0.3f};
  reference::quantize_activations(g.data(), 1, 4, ActQuant{ActQuantKind::kFp8Group, 2, 0, 448.0f});
  EXPECT_NEAR(g[1], 0.3f, 0.3f / 16);  // 0.3 at scale 4/448 lands near 33.6 → 32 (step 2)
  EXPECT_FLOAT_EQ(g[2], 0.3f);         // its group's amax maps it to exactly 448
  // Fixed 56/448: values beyond 56 saturate at 56.
  std::vector<float> f = {60.0f, -3.0f};
  reference::quantize_activations(f.data(), 1, 2,
                                  ActQuant{ActQuantKind::kFp8FixedScale, 128, 0.125f, 448.0f});
  EXPECT_FLOAT_EQ(f[0], 56.0f);
  EXPECT_FLOAT_EQ(f[1], -3.0f);
}

TEST(MoePlan, GroupsAssignmentsByExpert) {
  const int32_t ids[6] = {2, 0, 2, 1, 0, 2};  // 3 tokens, top 2
  const float w[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
  const MoePlan plan = plan_moe(ids, w, 3, 2, 4);
  EXPECT_EQ(plan.offsets, (std::vector<int32_t>{0, 2, 3, 6, 6}));
  EXPECT_EQ(plan.tokens, (std::vector<int32_t>{0, 2, 1, 0, 1, 2}));
  EXPECT_EQ(plan.slots, (std::vector<int32_t>{1, 4, 3, 0, 2, 5}));
  EXPECT_EQ(plan.active, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_FLOAT_EQ(plan.weights[0], 0.2f);
  const int32_t bad[2] = {0, 4};
  EXPECT_THROW(plan_moe(bad, w, 1, 2, 4), Error);
}

// Random bf16 experts and their exact values.
struct Experts {
  int64_t H = 32, I = 16;
  int E = 4;
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<std::vector<double>> exact;  // per expert: gate, up, down
  std::vector<ExpertWeights> views;
  explicit Experts(uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> n(0, 0.3f);
    for (int e = 0; e < E; ++e) {
      ExpertWeights w;
      for (int m = 0; m < 3; ++m) {
        const int64_t rows = m == 2 ? H : I, cols = m == 2 ? I : H;
        std::vector<uint8_t> b(rows * cols * 2);
        std::vector<double> x(rows * cols);
        for (int64_t i = 0; i < rows * cols; ++i) {
          const uint16_t code = f32_to_bf16(n(rng));
          std::memcpy(b.data() + 2 * i, &code, 2);
          x[i] = bf16_to_f32(code);
        }
        bytes.push_back(std::move(b));
        exact.push_back(std::move(x));
        WeightView v;
        v.format = WeightFormat::kBF16;
        v.rows = rows;
        v.cols = cols;
        v.data = bytes.back().data();
        (m == 0 ? w.gate : m == 1 ? w.up : w.down) = v;
      }
      views.push_back(w);
    }
  }
  // Naive output of expert e on one token.
  std::vector<double> run(int e, const float* x, const GluParams& act) const {
    const auto& g = exact[3 * e];
    const auto& u = exact[3 * e + 1];
    const auto& d = exact[3 * e + 2];
    std::vector<float> hidden(I);
    for (int64_t i = 0; i < I; ++i) {
      double a = 0, b = 0;
      for (int64_t c = 0; c < H; ++c) {
        a += g[i * H + c] * x[c];
        b += u[i * H + c] * x[c];
      }
      const float gf = static_cast<float>(a), uf = static_cast<float>(b);
      reference::glu(&gf, &uf, 1, act, &hidden[i]);
    }
    std::vector<double> out(H);
    for (int64_t r = 0; r < H; ++r)
      for (int64_t i = 0; i < I; ++i) out[r] += d[r * I + i] * hidden[i];
    return out;
  }
};

TEST(ReferenceMoe, MatchesNaivePerTokenLoop) {
  Experts ex(9);
  const int64_t T = 5;
  const int k = 2;
  std::mt19937 rng(2);
  std::normal_distribution<float> n(0, 1);
  std::vector<float> x(T * ex.H);
  for (float& v : x) v = n(rng);
  // Expert 3 gets no token; expert 1 gets three.
  const std::vector<int32_t> ids = {1, 0, 2, 1, 0, 2, 1, 0, 2, 0};
  const std::vector<float> w = {0.6f, 0.4f, 0.5f, 0.5f, 0.9f, 0.1f, 0.3f, 0.7f, 1.2f, 0.8f};
  for (GluKind kind : {GluKind::kSilu, GluKind::kSwigluOai}) {
    MoeArgs a;
    a.experts = ex.views.data();
    a.num_experts = ex.E;
    a.hidden = ex.H;
    a.inter = ex.I;
    a.x = x.data();
    a.T = T;
    a.expert_ids = ids.data();
    a.expert_weights = w.data();
    a.top_k = k;
    a.act.kind = kind;
    std::vector<float> y(T * ex.H), y_pool(T * ex.H);
    a.y = y.data();
    reference::moe(a, nullptr);
    for (int64_t t = 0; t < T; ++t) {
      std::vector<double> expected(ex.H);
      for (int j = 0; j < k; ++j) {
        auto out = ex.run(ids[t * k + j], x.data() + t * ex.H, a.act);
        for (int64_t c = 0; c < ex.H; ++c) expected[c] += w[t * k + j] * out[c];
      }
      for (int64_t c = 0; c < ex.H; ++c)
        EXPECT_NEAR(y[t * ex.H + c], expected[c], 1e-5) << "token " << t << " col " << c;
    }
    ThreadPool pool(3);
    a.y = y_pool.data();
    reference::moe(a, &pool);
    EXPECT_EQ(y, y_pool);  // experts on other threads: the same bits
  }
}

TEST(ReferenceMoe, DownInputQuantAndBf16ActivationsChangeTheResultSlightly) {
  Experts ex(10);
  std::vector<float> x(2 * ex.H, 0.37f);
  x[3] = -1.1f;
  const std::vector<int32_t> ids = {0, 1, 2, 3};
  const std::vector<float> w = {0.5f, 0.5f, 0.25f, 0.75f};
  MoeArgs a;
  a.experts = ex.views.data();
  a.num_experts = ex.E;
  a.hidden = ex.H;
  a.inter = ex.I;
  a.x = x.data();
  a.T = 2;
  a.expert_ids = ids.data();
  a.expert_weights = w.data();
  a.top_k = 2;
  std::vector<float> plain(2 * ex.H), quant(2 * ex.H), bf16(2 * ex.H);
  a.y = plain.data();
  reference::moe(a, nullptr);
  a.down_input_quant = ActQuant{ActQuantKind::kFp8PerToken, 128, 0, 448.0f};
  a.y = quant.data();
  reference::moe(a, nullptr);
  a.down_input_quant = ActQuant{};
  a.bf16_activations = true;
  a.y = bf16.data();
  reference::moe(a, nullptr);
  double dq = 0, db = 0, scale = 0;
  for (size_t i = 0; i < plain.size(); ++i) {
    dq = std::max(dq, std::fabs(double(quant[i]) - plain[i]));
    db = std::max(db, std::fabs(double(bf16[i]) - plain[i]));
    scale = std::max(scale, std::fabs(double(plain[i])));
  }
  EXPECT_GT(dq, 0);            // the quantization is applied...
  EXPECT_LT(dq, 0.1 * scale);  // ...and is a perturbation (e4m3: 3 mantissa bits)
  EXPECT_GT(db, 0);
  EXPECT_LT(db, 0.02 * scale);
}

TEST(ReferenceMoe, RejectsExpertsOfTheWrongShape) {
  Experts ex(11);
  std::vector<float> x(ex.H), y(ex.H);
  const int32_t ids[1] = {0};
  const float w[1] = {1};
  MoeArgs a;
  a.experts = ex.views.data();
  a.num_experts = ex.E;
  a.hidden = ex.H;
  a.inter = ex.I + 1;
  a.x = x.data();
  a.T = 1;
  a.expert_ids = ids;
  a.expert_weights = w;
  a.top_k = 1;
  a.y = y.data();
  EXPECT_THROW(reference::moe(a, nullptr), Error);
}

}  // namespace
}  // namespace minimax
