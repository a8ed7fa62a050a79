// The CPU backend's element-wise ops beyond the op table (tests/backend_ops/, which runs every op
// against the reference at every ISA level): RMSNorm and the gated activations give the same bits
// at every level, the router's ties, the argument checks, and the kernel table that registers
// them.
#include "kernels/cpu/cpu_ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "formats/float_formats.h"
#include "kernel_test_util.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace {

std::vector<float> seeded_floats(size_t n, uint32_t seed, float sd = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sd);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// ---- RMSNorm (every op against the reference at the table's shapes: tests/backend_ops/)
// ----------

TEST(CpuRmsNorm, EveryLevelGivesThePortableBits) {
  // The AVX-512 rows keep the portable loop's eight partial sums as lanes: the same bits, at
  // every tail length and with the (1 + w) weights.
  uint32_t seed = 100;
  for (int64_t dim : {1, 5, 8, 13, 64, 517, 3072}) {
    for (bool add_one : {false, true}) {
      const auto x = seeded_floats(3 * dim, seed++, 3.0f);
      const auto w = seeded_floats(dim, seed++, 0.5f);
      std::vector<float> want(x.size());
      cpu_rms_norm_at(x.data(), 3, dim, w.data(), 1e-6f, add_one, want.data(), nullptr,
                      CpuIsa::kScalar);
      for (CpuIsa isa : {CpuIsa::kAvx2, CpuIsa::kAvx512}) {
        if (!cpu_supports(isa)) continue;
        std::vector<float> got(x.size());
        cpu_rms_norm_at(x.data(), 3, dim, w.data(), 1e-6f, add_one, got.data(), nullptr, isa);
        EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
            << cpu_isa_name(isa) << " dim " << dim << " add_one " << add_one;
      }
    }
  }
}

TEST(CpuRmsNorm, RejectsEmptyRows) {
  float x = 1, w = 1;
  EXPECT_THROW(cpu_rms_norm(&x, 1, 0, &w, 1e-6f, false, &x, nullptr), Error);
}

// ---- RoPE
// ----------------------------------------------------------------------------------------

TEST(CpuRope, RejectsBadRotaryDim) {
  float x[8] = {};
  const int32_t pos = 0;
  EXPECT_THROW(cpu_rope(x, 1, &pos, RopeParams{1, 8, 5, 10000.0}, nullptr), Error);
  EXPECT_THROW(cpu_rope(x, 1, &pos, RopeParams{1, 8, 10, 10000.0}, nullptr), Error);
}

// ---- Router -------------------------------------------------------------------------------------

struct RouteCase {
  int num_experts, top_k;
  bool bias, renormalize;
  float routed_scale;
  int levels;  // logits drawn from this many distinct values (few: many ties); 0 = continuous
};

TEST(CpuRoute, SameExpertsAndWeightsAsTheReference) {
  const RouteCase cases[] = {
      {16, 4, true, true, 1.0f, 0},   {16, 4, false, true, 1.0f, 3},  // tiny M2
      {16, 4, false, true, 2.0f, 0},  {16, 4, false, true, 2.0f, 2},  // tiny M3
      {256, 8, true, true, 1.0f, 0},  {256, 8, true, true, 1.0f, 5},  // M2
      {128, 4, false, true, 2.0f, 0}, {128, 4, true, true, 2.0f, 4},  // M3
      {7, 7, true, false, 1.0f, 2},   {5, 1, false, true, 1.0f, 1},   // all chosen; all tied
      {33, 3, true, false, 1.5f, 0},
  };
  uint32_t seed = 11;
  for (const RouteCase& c : cases) {
    const int64_t T = 50;
    std::mt19937 rng(seed++);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    std::vector<float> logits(T * c.num_experts), bias(c.num_experts);
    for (float& v : logits) v = c.levels > 0 ? static_cast<float>(rng() % c.levels) - 1 : dist(rng);
    // A bias with repeated values keeps ties possible after it is added.
    for (float& v : bias) v = c.levels > 0 ? 0.25f * static_cast<float>(rng() % 2) : dist(rng);
    RouterArgs r;
    r.logits = logits.data();
    r.T = T;
    r.num_experts = c.num_experts;
    r.top_k = c.top_k;
    r.selection_bias = c.bias ? bias.data() : nullptr;
    r.renormalize = c.renormalize;
    r.routed_scale = c.routed_scale;
    std::vector<int32_t> ref_ids(T * c.top_k), ids(T * c.top_k);
    std::vector<float> ref_w(T * c.top_k), w(T * c.top_k);
    r.expert_ids = ref_ids.data();
    r.expert_weights = ref_w.data();
    reference::route(r);
    r.expert_ids = ids.data();
    r.expert_weights = w.data();
    cpu_route(r);
    EXPECT_EQ(ids, ref_ids) << c.num_experts << " experts top-" << c.top_k;
    EXPECT_EQ(std::memcmp(w.data(), ref_w.data(), w.size() * sizeof(float)), 0);
  }
}

TEST(CpuRoute, TiesGoToTheLowerExpert) {
  const float logits[6] = {0.5f, 1.0f, 0.5f, 1.0f, 0.5f, -3.0f};
  int32_t ids[4];
  float weights[4];
  RouterArgs r;
  r.logits = logits;
  r.T = 1;
  r.num_experts = 6;
  r.top_k = 4;
  r.expert_ids = ids;
  r.expert_weights = weights;
  cpu_route(r);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 3);
  EXPECT_EQ(ids[2], 0);
  EXPECT_EQ(ids[3], 2);
  r.top_k = 7;
  EXPECT_THROW(cpu_route(r), Error);
}

// ---- Gated activations --------------------------------------------------------------------------

TEST(CpuGlu, Avx512IsTheDoubleResultRoundedOnceEvenAtTheEdges) {
  // The AVX-512 kernel computes in double: against the same formula in double (std::exp), at
  // zeros, denormals, exp's overflow in f32 and in double, infinities and NaN, every output is
  // that value rounded to f32 (or one ulp off it), zeros keep their sign and NaN stays NaN.
  if (!cpu_supports(CpuIsa::kAvx512)) GTEST_SKIP() << "no AVX-512 on this CPU";
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const std::vector<float> specials = {0.0f,    -0.0f,  1e-40f,  -1e-40f, 88.0f,  -88.0f, 104.0f,
                                       -104.0f, 800.0f, -800.0f, 1e30f,   -1e30f, 3e38f,  -3e38f,
                                       inf,     -inf,   nan,     7.0f,    -7.0f,  1.0f,   -2.5f};
  std::vector<float> gate, up;
  for (float g : specials)
    for (float u : specials) {
      gate.push_back(g);
      up.push_back(u);
    }
  // And the working range, densely: a coefficient of the exponential off by 1e-4 shows here.
  const auto g_random = seeded_floats(4096, 7, 30.0f), u_random = seeded_floats(4096, 8, 10.0f);
  gate.insert(gate.end(), g_random.begin(), g_random.end());
  up.insert(up.end(), u_random.begin(), u_random.end());
  const int64_t n = static_cast<int64_t>(gate.size());
  for (GluKind kind : {GluKind::kSilu, GluKind::kSwigluOai}) {
    GluParams p;
    p.kind = kind;
    std::vector<float> got(n);
    cpu_glu_at(gate.data(), up.data(), n, p, got.data(), CpuIsa::kAvx512);
    for (int64_t i = 0; i < n; ++i) {
      double g = gate[i], u = up[i], arg = g;
      if (kind == GluKind::kSwigluOai) {
        g = std::min(g, static_cast<double>(p.limit));
        u = std::clamp(u, -static_cast<double>(p.limit), static_cast<double>(p.limit)) + p.beta;
        arg = static_cast<double>(p.alpha) * g;
      }
      const float want = static_cast<float>(g / (1.0 + std::exp(-arg)) * u);
      const std::string where = std::string(kind == GluKind::kSilu ? "silu" : "swiglu-oai") +
                                " g=" + std::to_string(gate[i]) + " u=" + std::to_string(up[i]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << where << " got " << got[i];
      } else if (want == 0.0f || std::isinf(want)) {
        EXPECT_EQ(got[i], want) << where;
        EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << where;
      } else {
        EXPECT_LE(std::fabs(got[i] - want), 2 * kU * std::fabs(want)) << where << " got " << got[i];
      }
    }
  }
}

TEST(CpuGlu, SwigluOaiClampsAndAddsOne) {
  GluParams p;
  p.kind = GluKind::kSwigluOai;
  const float gate[3] = {100.0f, 1.0f, -2.0f}, up[3] = {0.0f, 100.0f, -1.0f};
  float out[3];
  cpu_glu(gate, up, 3, p, out);
  auto sig = [](double x) { return 1 / (1 + std::exp(-x)); };
  EXPECT_NEAR(out[0], 7 * sig(1.702 * 7) * 1, 1e-5);    // g clamped to 7, u + 1
  EXPECT_NEAR(out[1], 1 * sig(1.702) * 8, 1e-5);        // u clamped to 7
  EXPECT_NEAR(out[2], -2 * sig(-2 * 1.702) * 0, 1e-7);  // u + 1 = 0
}

// ---- Embedding ----------------------------------------------------------------------------------

TEST(CpuEmbedding, NamesATokenOutsideTheTable) {
  const float table[4 * 2] = {};
  WeightView w;
  w.rows = 4;
  w.cols = 2;
  w.data = reinterpret_cast<const uint8_t*>(table);
  float out[2];
  for (const int32_t bad : {4, -1}) {
    try {
      cpu_embedding(w, &bad, 1, out);
      ADD_FAILURE() << "token " << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
    }
  }
}

// ---- Registration -------------------------------------------------------------------------------

TEST(CpuBackendTable, ProvidesEveryOpButActivationQuantizationAndCopies) {
  const KernelOps ops = cpu_kernel_ops(CpuKernelConfig{});
  for (const bool provided :
       {ops.embedding != nullptr, ops.rms_norm != nullptr, ops.rope != nullptr,
        ops.attention != nullptr, ops.select_blocks != nullptr, ops.route != nullptr,
        ops.glu != nullptr, ops.moe != nullptr, ops.linear != nullptr, ops.add != nullptr})
    EXPECT_TRUE(provided);
  EXPECT_EQ(ops.quantize_activations, nullptr);
  // The completed table names what it took from the reference: exactly the ops left out above.
  std::vector<std::string_view> fallbacks = kernel_ops(BackendKind::kCpu).from_reference;
  std::sort(fallbacks.begin(), fallbacks.end());
  EXPECT_EQ(fallbacks,
            (std::vector<std::string_view>{"copy", "gather_rows", "quantize_activations",
                                           "rms_norm_from_sums", "store_kv", "sum_squares"}));
}

}  // namespace
}  // namespace minimax
