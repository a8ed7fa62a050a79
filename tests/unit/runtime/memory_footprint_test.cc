// The memory arithmetic against the published configs (tests/data/configs/m2_fp8 is MiniMax-M2.5's
// config.json, m3_bf16 MiniMax-M3's): weight bytes per layout and rank, KV bytes per token. The
// expected values are worked out here from the published dimensions, independently of the tensor
// table, or are the published checkpoints' sizes.
#include "runtime/memory_footprint.h"

#include <gtest/gtest.h>

#include "checkpoint/model_config.h"

namespace minimax {
namespace {

nlohmann::json published(const std::string& name) {
  return read_json_file(std::string(MINIMAX_TEST_DATA) + "/configs/" + name + "/config.json");
}

ParallelPlan plan_of(const ModelConfig& config, int tp, bool ep, int rank = 0) {
  if (tp == 1) return make_parallel_plan({}, 1, 0, config);
  return make_parallel_plan({.tensor_parallel = tp, .expert_parallel = ep}, tp, rank, config);
}

WeightFootprint footprint(const std::string& name, QuantScheme scheme, int tp = 1, bool ep = false,
                          int rank = 0) {
  const nlohmann::json json = published(name);
  const ModelConfig config = parse_model_config(json, name);
  return weight_footprint(config, quant_config_for_layout(json, scheme, name),
                          plan_of(config, tp, ep, rank));
}

// MiniMax-M2.5's dimensions, as spec/model.md §1 gives them.
constexpr uint64_t kLayers = 62, kHidden = 3072, kVocab = 200064, kExperts = 256, kInter = 1536;
constexpr uint64_t kQ = 48 * 128, kKv = 8 * 128, kTopK = 8;
constexpr uint64_t kAttnLinear = kQ * kHidden + 2 * kKv * kHidden + kHidden * kQ;
constexpr uint64_t kExpertLinear = 3 * kInter * kHidden;  // w1, w3, w2
// Per layer, kept in BF16 by every layout: input and post norms, the q and k norms (M2 normalises
// the whole flattened projection); in F32: the router and its selection bias.
constexpr uint64_t kLayerBf16 = 2 * kHidden + kQ + kKv;
constexpr uint64_t kLayerF32 = kExperts * kHidden + kExperts;
constexpr uint64_t kModelBf16 = 2 * kVocab * kHidden + kHidden;  // embedding, lm_head, final norm

TEST(MemoryFootprint, M25Bf16IsTwoBytesAWeight) {
  const uint64_t want =
      2 * (kLayers * (kAttnLinear + kExperts * kExpertLinear + kLayerBf16) + kModelBf16) +
      4 * kLayers * kLayerF32;
  EXPECT_EQ(footprint("m2_fp8", QuantScheme::kNone).held, want);
}

TEST(MemoryFootprint, M25BlockFp8IsOneByteAWeightAndAScalePer128x128) {
  // F32 scales per 128 × 128 block: q and o 48 × 24 each, k and v 8 × 24; each expert matrix 288.
  const uint64_t attn_scales = 2 * 48 * 24 + 2 * 8 * 24, expert_scales = 3 * 12 * 24;
  const uint64_t per_layer = kAttnLinear + 4 * attn_scales +
                             kExperts * (kExpertLinear + 4 * expert_scales) + 2 * kLayerBf16 +
                             4 * kLayerF32;
  const WeightFootprint f = footprint("m2_fp8", QuantScheme::kFp8Block);
  EXPECT_EQ(f.held, kLayers * per_layer + 2 * kModelBf16);
  // The published MiniMax-M2.5 is about 230 GB.
  EXPECT_NEAR(double(f.held) / 1e9, 230, 3);
  // A decoded token reads 8 of the 256 experts, all of attention and the lm_head, one embedding
  // row: about 10 GB (recipes/minimax-m2.5-fp8-cpu-512g.yaml).
  const double experts = double(kLayers * kExperts * (kExpertLinear + 4 * expert_scales));
  const double expected_per_token = double(f.held) - experts + experts * kTopK / kExperts -
                                    double(kVocab * kHidden * 2) + double(kHidden * 2);
  EXPECT_NEAR(double(f.per_token), expected_per_token, 1.0);
}

TEST(MemoryFootprint, FourBitLayoutsAreAboutAQuarterOfBf16) {
  const double bf16 = double(footprint("m2_fp8", QuantScheme::kNone).held);
  for (QuantScheme scheme : {QuantScheme::kMxfp4, QuantScheme::kNvfp4}) {
    const double four_bit = double(footprint("m2_fp8", scheme).held);
    // Experts at 4.25 (MXFP4) or 4.5 (NVFP4) bits; attention and embeddings stay BF16.
    EXPECT_GT(four_bit / bf16, 0.26) << quant_scheme_name(scheme);
    EXPECT_LT(four_bit / bf16, 0.32) << quant_scheme_name(scheme);
  }
  // Quark's MXFP4 keeps attention in BF16; its FP8-attention variant stores those 2.7 B weights
  // in one byte instead of two.
  const double saved = double(footprint("m2_fp8", QuantScheme::kMxfp4).held) -
                       double(footprint("m2_fp8", QuantScheme::kMxfp4Fp8Attn).held);
  EXPECT_NEAR(saved, double(kLayers * kAttnLinear), double(kLayers * kAttnLinear) * 0.01);
}

TEST(MemoryFootprint, M3MatchesThePublishedReleases) {
  // MXFP8: 423 GB of FP8 weights (recipes/minimax-m3-fp8-8xh200.yaml's count), one E8M0 scale
  // per 32 of them (+13 GB) and 4.9 GB of BF16 embeddings. amd's Quark MXFP4 is about 245 GB; the
  // vision tower it also holds is not loaded.
  EXPECT_NEAR(double(footprint("m3_bf16", QuantScheme::kMxfp8).held) / 1e9, 423 * 33.0 / 32 + 4.9,
              1.5);
  EXPECT_NEAR(double(footprint("m3_bf16", QuantScheme::kMxfp4Fp8Attn).held) / 1e9, 245, 12);
}

TEST(MemoryFootprint, ExpertParallelRanksHoldHalfTheExpertsEach) {
  const WeightFootprint whole = footprint("m2_fp8", QuantScheme::kFp8Block);
  const WeightFootprint r0 = footprint("m2_fp8", QuantScheme::kFp8Block, 2, true, 0);
  const WeightFootprint r1 = footprint("m2_fp8", QuantScheme::kFp8Block, 2, true, 1);
  EXPECT_EQ(r0.held, r1.held);
  // Everything but the embedding, the router and the norms (replicated) is split in two.
  const double replicated = double(kVocab * kHidden * 2 + kLayers * kLayerF32 * 4);
  EXPECT_NEAR(double(r0.held), (double(whole.held) + replicated) / 2, 2e7);
  EXPECT_GT(r0.held, whole.held / 2);
  // The recipe's "about 115 GB per host".
  EXPECT_NEAR(double(r0.held) / 1e9, 115, 2);
}

TEST(MemoryFootprint, KvBytesPerTokenPerTypeAndRank) {
  const ModelConfig m2 = parse_model_config(published("m2_fp8"), "m2");
  const ModelConfig m3 = parse_model_config(published("m3_bf16"), "m3");
  // 62 layers × K and V × 8 heads × 128: 248 KiB a token in bf16 (issue 39's figure).
  EXPECT_EQ(kv_bytes_per_token(m2, plan_of(m2, 1, false), KvDtype::kBF16), 62 * 2 * 8 * 128 * 2);
  EXPECT_EQ(kv_bytes_per_token(m2, plan_of(m2, 1, false), KvDtype::kF32), 62 * 2 * 8 * 128 * 4);
  EXPECT_EQ(kv_bytes_per_token(m2, plan_of(m2, 1, false), KvDtype::kFp8E4m3), 62 * 2 * 8 * 128);
  EXPECT_EQ(kv_bytes_per_token(m2, plan_of(m2, 2, true), KvDtype::kBF16), 62 * 2 * 4 * 128 * 2);
  // M3: 60 layers × 2 × 4 heads × 128, plus one 128-wide index key on each of the 57 MSA layers.
  EXPECT_EQ(kv_bytes_per_token(m3, plan_of(m3, 1, false), KvDtype::kBF16),
            (60 * 2 * 4 * 128 + 57 * 128) * 2);
  // Over 8 ranks each holds one KV head (a copy) and every index key: 45 KiB, not 134 / 8.
  EXPECT_EQ(kv_bytes_per_token(m3, plan_of(m3, 8, true, 5), KvDtype::kBF16),
            (60 * 2 * 1 * 128 + 57 * 128) * 2);
}

TEST(MemoryFootprint, ALayoutWhoseBlockDoesNotDivideNamesTheTensor) {
  nlohmann::json json = published("m2_fp8");
  json["intermediate_size"] = 1544;  // not a multiple of MXFP4's 32
  const ModelConfig config = parse_model_config(json, "m2");
  try {
    weight_footprint(config, quant_config_for_layout(json, QuantScheme::kMxfp4, "m2"),
                     plan_of(config, 1, false));
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("experts"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace minimax
