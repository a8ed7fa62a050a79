// The tensor table at the real M2 / M3 dims, name classification, and each scheme's stored tensors.
#include "checkpoint/tensor_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "base/error.h"
#include "config_fixtures.h"

namespace minimax {
namespace {

using nlohmann::json;
using Shape = std::vector<int64_t>;

const TensorSpec& find(const std::vector<TensorSpec>& table, const std::string& name) {
  for (const TensorSpec& spec : table)
    if (spec.name == name) return spec;
  throw std::runtime_error("not in the table: " + name);
}

std::map<TensorRole, int> count_roles(const std::vector<TensorSpec>& table) {
  std::map<TensorRole, int> counts;
  for (const TensorSpec& spec : table) ++counts[spec.role];
  return counts;
}

class TensorTableTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    m2_ = new ModelConfig(load_model_config(fixture_dir("m2_bf16")));
    m3_ = new ModelConfig(load_model_config(fixture_dir("m3_bf16")));
  }
  static void TearDownTestSuite() {
    delete m2_;
    delete m3_;
  }
  static ModelConfig* m2_;
  static ModelConfig* m3_;
};
ModelConfig* TensorTableTest::m2_ = nullptr;
ModelConfig* TensorTableTest::m3_ = nullptr;

TEST_F(TensorTableTest, M2CountsAndShapes) {
  std::vector<TensorSpec> t = tensor_table(*m2_);
  // 62 layers x (2 norms + 4 attention + 2 qk norms + router + bias + 256 experts x 3) + 3 globals.
  EXPECT_EQ(t.size(), 62u * (2 + 4 + 2 + 2 + 256 * 3) + 3);
  using R = TensorRole;
  std::map<TensorRole, int> expected = {
      {R::kEmbedding, 1}, {R::kFinalNorm, 1},   {R::kLmHead, 1},
      {R::kNorm, 124},    {R::kAttention, 248}, {R::kQkNorm, 124},
      {R::kRouter, 62},   {R::kRouterBias, 62}, {R::kRoutedExpert, 62 * 256 * 3}};
  EXPECT_EQ(count_roles(t), expected);
  EXPECT_EQ(t.front().name, "model.embed_tokens.weight");
  EXPECT_EQ(t.front().shape, (Shape{200064, 3072}));
  EXPECT_EQ(t.back().name, "lm_head.weight");
  EXPECT_EQ(t.back().shape, (Shape{200064, 3072}));
  EXPECT_TRUE(t.back().linear);
  // spec/model.md §3.1.
  EXPECT_EQ(find(t, "model.layers.0.self_attn.q_proj.weight").shape, (Shape{6144, 3072}));
  EXPECT_EQ(find(t, "model.layers.0.self_attn.k_proj.weight").shape, (Shape{1024, 3072}));
  EXPECT_EQ(find(t, "model.layers.0.self_attn.v_proj.weight").shape, (Shape{1024, 3072}));
  EXPECT_EQ(find(t, "model.layers.0.self_attn.o_proj.weight").shape, (Shape{3072, 6144}));
  EXPECT_EQ(find(t, "model.layers.9.self_attn.q_norm.weight").shape, (Shape{6144}));
  EXPECT_EQ(find(t, "model.layers.9.self_attn.k_norm.weight").shape, (Shape{1024}));
  EXPECT_EQ(find(t, "model.layers.61.input_layernorm.weight").shape, (Shape{3072}));
  EXPECT_EQ(find(t, "model.norm.weight").shape, (Shape{3072}));
  const TensorSpec& gate = find(t, "model.layers.61.block_sparse_moe.gate.weight");
  EXPECT_EQ(gate.shape, (Shape{256, 3072}));
  EXPECT_FALSE(gate.linear);
  EXPECT_EQ(find(t, "model.layers.61.block_sparse_moe.e_score_correction_bias").shape,
            (Shape{256}));
  const TensorSpec& w1 = find(t, "model.layers.3.block_sparse_moe.experts.7.w1.weight");
  EXPECT_EQ(w1.shape, (Shape{1536, 3072}));
  EXPECT_EQ(w1.layer, 3);
  EXPECT_EQ(w1.expert, 7);
  EXPECT_TRUE(w1.linear);
  EXPECT_EQ(find(t, "model.layers.61.block_sparse_moe.experts.255.w3.weight").shape,
            (Shape{1536, 3072}));
  EXPECT_EQ(find(t, "model.layers.61.block_sparse_moe.experts.255.w2.weight").shape,
            (Shape{3072, 1536}));
  std::set<std::string> names;
  for (const TensorSpec& spec : t) names.insert(spec.name);
  EXPECT_EQ(names.size(), t.size());
}

TEST_F(TensorTableTest, M3CountsAndShapes) {
  std::vector<TensorSpec> t = tensor_table(*m3_);
  // 3 dense layers x (2 norms + 4 attention + 2 qk norms + 3 FFN) + 57 MoE + sparse layers x
  // (2 + 4 + 2 + 4 index + router + bias + 128 x 3 experts + 3 shared) + 3 globals.
  EXPECT_EQ(t.size(), 3u * 11 + 57u * (12 + 2 + 384 + 3) + 3);
  const std::string p = "language_model.model.layers.";
  EXPECT_EQ(t.front().name, "language_model.model.embed_tokens.weight");
  EXPECT_EQ(t.back().name, "language_model.lm_head.weight");
  EXPECT_EQ(t.back().shape, (Shape{200064, 6144}));
  EXPECT_EQ(find(t, p + "0.self_attn.q_proj.weight").shape, (Shape{8192, 6144}));
  EXPECT_EQ(find(t, p + "0.self_attn.k_proj.weight").shape, (Shape{512, 6144}));
  EXPECT_EQ(find(t, p + "0.self_attn.o_proj.weight").shape, (Shape{6144, 8192}));
  EXPECT_EQ(find(t, p + "0.self_attn.q_norm.weight").shape, (Shape{128}));  // per head
  EXPECT_EQ(find(t, p + "0.self_attn.k_norm.weight").shape, (Shape{128}));
  EXPECT_EQ(find(t, p + "2.mlp.gate_proj.weight").shape, (Shape{12288, 6144}));
  EXPECT_EQ(find(t, p + "2.mlp.down_proj.weight").shape, (Shape{6144, 12288}));
  EXPECT_EQ(find(t, p + "3.self_attn.index_q_proj.weight").shape, (Shape{512, 6144}));
  EXPECT_EQ(find(t, p + "3.self_attn.index_k_proj.weight").shape, (Shape{128, 6144}));
  EXPECT_EQ(find(t, p + "3.self_attn.index_q_norm.weight").shape, (Shape{128}));
  EXPECT_EQ(find(t, p + "59.block_sparse_moe.gate.weight").shape, (Shape{128, 6144}));
  EXPECT_EQ(find(t, p + "59.block_sparse_moe.e_score_correction_bias").shape, (Shape{128}));
  EXPECT_EQ(find(t, p + "59.block_sparse_moe.experts.127.w1.weight").shape, (Shape{3072, 6144}));
  EXPECT_EQ(find(t, p + "59.block_sparse_moe.experts.127.w2.weight").shape, (Shape{6144, 3072}));
  EXPECT_EQ(find(t, p + "4.block_sparse_moe.shared_experts.up_proj.weight").shape,
            (Shape{3072, 6144}));
  EXPECT_EQ(find(t, p + "4.block_sparse_moe.shared_experts.down_proj.weight").shape,
            (Shape{6144, 3072}));
  EXPECT_THROW(find(t, p + "0.self_attn.index_q_proj.weight"), std::runtime_error);
  EXPECT_THROW(find(t, p + "3.mlp.gate_proj.weight"), std::runtime_error);
  EXPECT_THROW(find(t, p + "0.block_sparse_moe.gate.weight"), std::runtime_error);
}

TEST_F(TensorTableTest, TiedEmbeddingsHaveNoLmHead) {
  json config = m2_->raw;
  config["tie_word_embeddings"] = true;
  ModelConfig tied = parse_model_config(config, "x");
  std::vector<TensorSpec> t = tensor_table(tied);
  EXPECT_EQ(t.size(), tensor_table(*m2_).size() - 1);
  EXPECT_EQ(t.back().name, "model.norm.weight");
  EXPECT_EQ(classify_tensor("lm_head.weight", tied), TensorRole::kUnknown);
}

TEST_F(TensorTableTest, EveryTableNameClassifiesToItsRole) {
  for (const ModelConfig* model : {m2_, m3_}) {
    for (const TensorSpec& spec : tensor_table(*model)) {
      ASSERT_EQ(classify_tensor(spec.name, *model), spec.role) << spec.name;
      ASSERT_FALSE(engine_skips(spec.role)) << spec.name;
    }
  }
}

TEST_F(TensorTableTest, ClassifiesSkippedAndSideTensors) {
  using R = TensorRole;
  const ModelConfig& m2 = *m2_;
  const ModelConfig& m3 = *m3_;
  // M2 numbers its 3 MTP modules after layer 61.
  EXPECT_EQ(classify_tensor("model.layers.62.self_attn.q_proj.weight", m2), R::kMtp);
  EXPECT_EQ(classify_tensor("model.layers.64.enorm.weight", m2), R::kMtp);
  EXPECT_EQ(classify_tensor("model.layers.65.self_attn.q_proj.weight", m2), R::kUnknown);
  EXPECT_EQ(classify_tensor("language_model.model.mtp.layers.0.eh_proj.weight", m3), R::kMtp);
  EXPECT_EQ(
      classify_tensor("language_model.model.mtp.layers.6.block_sparse_moe.experts.3.w1.weight", m3),
      R::kMtp);
  EXPECT_EQ(classify_tensor("vision_tower.encoder.layers.0.mlp.fc1.weight", m3), R::kVision);
  EXPECT_EQ(classify_tensor("multi_modal_projector.linear_1.weight", m3), R::kVision);
  EXPECT_EQ(classify_tensor("patch_merge_mlp.0.weight", m3), R::kVision);
  EXPECT_EQ(classify_tensor("model.rotary_emb.inv_freq", m2), R::kRotaryInvFreq);
  EXPECT_EQ(classify_tensor("model.layers.0.self_attn.rotary_emb.inv_freq", m2), R::kRotaryInvFreq);
  for (R role : {R::kMtp, R::kVision, R::kRotaryInvFreq}) EXPECT_TRUE(engine_skips(role));
  EXPECT_FALSE(engine_skips(R::kUnknown));
  // Quantization side tensors belong to their Linear.
  EXPECT_EQ(classify_tensor("model.layers.3.block_sparse_moe.experts.7.w1.weight_scale_inv", m2),
            R::kRoutedExpert);
  EXPECT_EQ(classify_tensor("model.layers.3.block_sparse_moe.experts.7.w2.weight_scale_2", m2),
            R::kRoutedExpert);
  EXPECT_EQ(classify_tensor("model.layers.3.block_sparse_moe.experts.7.w3.input_scale", m2),
            R::kRoutedExpert);
  EXPECT_EQ(classify_tensor("model.layers.3.self_attn.k_proj.k_scale", m2), R::kAttention);
  EXPECT_EQ(classify_tensor("model.layers.3.self_attn.o_proj.weight_scale", m2), R::kAttention);
  EXPECT_EQ(classify_tensor("lm_head.weight_scale", m2), R::kLmHead);
  // Names that do not fit the config.
  EXPECT_EQ(classify_tensor("model.layers.3.block_sparse_moe.experts.256.w1.weight", m2),
            R::kUnknown);
  EXPECT_EQ(classify_tensor("model.layers.3.block_sparse_moe.experts.7.w4.weight", m2),
            R::kUnknown);
  EXPECT_EQ(classify_tensor("model.layers.3.block_sparse_moe.experts.x.w1.weight", m2),
            R::kUnknown);
  EXPECT_EQ(classify_tensor("model.layers.3.self_attn.q_proj.bias", m2), R::kUnknown);
  EXPECT_EQ(classify_tensor("model.layers.3.mlp.gate_proj.weight", m2), R::kUnknown);
  EXPECT_EQ(classify_tensor("model.layers.3.self_attn.index_q_proj.weight", m2), R::kUnknown);
  EXPECT_EQ(classify_tensor("model.layers..self_attn.q_proj.weight", m2), R::kUnknown);
  EXPECT_EQ(classify_tensor("layers.3.self_attn.q_proj.weight", m2), R::kUnknown);
  EXPECT_EQ(classify_tensor("lm_head.weight", m3), R::kUnknown);  // M3's is language_model.lm_head
  EXPECT_EQ(classify_tensor("model.embed_tokens.weight", m3), R::kUnknown);
  const std::string p = "language_model.model.layers.";
  EXPECT_EQ(classify_tensor(p + "0.self_attn.index_q_proj.weight", m3), R::kUnknown);
  EXPECT_EQ(classify_tensor(p + "3.mlp.gate_proj.weight", m3), R::kUnknown);
  EXPECT_EQ(classify_tensor(p + "0.block_sparse_moe.gate.weight", m3), R::kUnknown);
  EXPECT_EQ(classify_tensor(p + "3.block_sparse_moe.shared_experts.gate_proj.weight_scale", m3),
            R::kSharedExpert);
  EXPECT_EQ(tensor_role_name(R::kRoutedExpert), "routed_expert");
  EXPECT_EQ(tensor_role_name(R::kRotaryInvFreq), "rotary_inv_freq");
}

QuantConfig quant_of(QuantScheme scheme, const ModelConfig& model) {
  json config = model.raw;
  config["quantization_config"] = quantization_config_json(scheme, model);
  return detect_quantization(config, std::nullopt, "x/config.json");
}

struct Stored {
  std::string name;
  DType dtype;
  Shape shape;
  bool operator==(const Stored&) const = default;
};
std::vector<Stored> stored(const TensorSpec& spec, const QuantConfig& quant) {
  std::vector<Stored> out;
  for (const StoredTensor& t : stored_tensors(spec, quant))
    out.push_back({t.name, t.dtype, t.shape});
  return out;
}
void PrintTo(const Stored& s, std::ostream* os) {
  *os << s.name << " " << dtype_name(s.dtype) << " [";
  for (int64_t d : s.shape) *os << d << ",";
  *os << "]";
}

TEST_F(TensorTableTest, StoredTensorsPerScheme) {
  using D = DType;
  std::vector<TensorSpec> t = tensor_table(*m2_);
  const TensorSpec& q_proj = find(t, "model.layers.0.self_attn.q_proj.weight");
  const TensorSpec& w1 = find(t, "model.layers.1.block_sparse_moe.experts.2.w1.weight");
  const TensorSpec& w2 = find(t, "model.layers.1.block_sparse_moe.experts.2.w2.weight");
  const std::string e = "model.layers.1.block_sparse_moe.experts.2.";

  QuantConfig fp8 = load_quant_config(fixture_dir("m2_fp8"));
  EXPECT_EQ(stored(q_proj, fp8),
            (std::vector<Stored>{
                {q_proj.name, D::kF8_E4M3, {6144, 3072}},
                {"model.layers.0.self_attn.q_proj.weight_scale_inv", D::kF32, {48, 24}}}));
  EXPECT_EQ(stored(w2, fp8), (std::vector<Stored>{{w2.name, D::kF8_E4M3, {3072, 1536}},
                                                  {e + "w2.weight_scale_inv", D::kF32, {24, 12}}}));
  TensorSpec odd{"x.proj.weight", TensorRole::kAttention, {200, 300}, 0, -1, true, {}, {}};
  EXPECT_EQ(stored(odd, fp8)[1], (Stored{"x.proj.weight_scale_inv", D::kF32, {2, 3}}));  // ceil

  QuantConfig channel = quant_of(QuantScheme::kFp8Channel, *m2_);
  EXPECT_EQ(stored(w1, channel),
            (std::vector<Stored>{{w1.name, D::kF8_E4M3, {1536, 3072}},
                                 {e + "w1.weight_scale", D::kF32, {1536, 1}}}));
  EXPECT_EQ(stored(q_proj, channel), (std::vector<Stored>{{q_proj.name, D::kBF16, {6144, 3072}}}));

  QuantConfig mxfp4 = load_quant_config(fixture_dir("m2_mxfp4"));
  EXPECT_EQ(stored(w1, mxfp4), (std::vector<Stored>{{w1.name, D::kU8, {1536, 1536}},
                                                    {e + "w1.weight_scale", D::kU8, {1536, 96}}}));
  EXPECT_EQ(stored(w2, mxfp4), (std::vector<Stored>{{w2.name, D::kU8, {3072, 768}},
                                                    {e + "w2.weight_scale", D::kU8, {3072, 48}}}));

  QuantConfig nvfp4 = load_quant_config(fixture_dir("m2_nvfp4"));
  EXPECT_EQ(stored(w1, nvfp4),
            (std::vector<Stored>{{w1.name, D::kU8, {1536, 1536}},
                                 {e + "w1.weight_scale", D::kF8_E4M3, {1536, 192}},
                                 {e + "w1.weight_scale_2", D::kF32, {}},
                                 {e + "w1.input_scale", D::kF32, {}}}));

  // MXFP8: e4m3 codes and U8 e8m0 codes per 32 inputs under weight_scale_inv.
  QuantConfig mxfp8 = quant_of(QuantScheme::kMxfp8, *m2_);
  EXPECT_EQ(stored(q_proj, mxfp8),
            (std::vector<Stored>{
                {q_proj.name, D::kF8_E4M3, {6144, 3072}},
                {"model.layers.0.self_attn.q_proj.weight_scale_inv", D::kU8, {6144, 96}}}));
  EXPECT_EQ(stored(w2, mxfp8),
            (std::vector<Stored>{{w2.name, D::kF8_E4M3, {3072, 1536}},
                                 {e + "w2.weight_scale_inv", D::kU8, {3072, 48}}}));

  // Quark MXFP4 with FP8 attention: a per-channel F32 scale [out] beside the e4m3 codes.
  QuantConfig fp8_attention = quant_of(QuantScheme::kMxfp4Fp8Attn, *m2_);
  EXPECT_EQ(
      stored(q_proj, fp8_attention),
      (std::vector<Stored>{{q_proj.name, D::kF8_E4M3, {6144, 3072}},
                           {"model.layers.0.self_attn.q_proj.weight_scale", D::kF32, {6144}}}));
  EXPECT_EQ(stored(w1, fp8_attention), stored(w1, mxfp4));
  // Per tensor with static inputs: one F32 scale and the calibrated input_scale.
  json per_tensor = fp8_attention.raw;
  per_tensor["layer_quant_config"]["*self_attn*"]["weight"]["qscheme"] = "per_tensor";
  per_tensor["layer_quant_config"]["*self_attn*"]["input_tensors"]["qscheme"] = "per_tensor";
  per_tensor["layer_quant_config"]["*self_attn*"]["input_tensors"]["is_dynamic"] = false;
  json config = m2_->raw;
  config["quantization_config"] = per_tensor;
  EXPECT_EQ(stored(q_proj, detect_quantization(config, std::nullopt, "x/config.json")),
            (std::vector<Stored>{{q_proj.name, D::kF8_E4M3, {6144, 3072}},
                                 {"model.layers.0.self_attn.q_proj.weight_scale", D::kF32, {}},
                                 {"model.layers.0.self_attn.q_proj.input_scale", D::kF32, {}}}));

  // Unquantized tensors in their release dtype, whatever the scheme.
  QuantConfig none;
  for (const QuantConfig* q : {&none, &fp8, &channel, &mxfp4, &nvfp4, &mxfp8, &fp8_attention}) {
    EXPECT_EQ(stored(find(t, "model.layers.1.block_sparse_moe.gate.weight"), *q)[0].dtype, D::kF32);
    EXPECT_EQ(
        stored(find(t, "model.layers.1.block_sparse_moe.e_score_correction_bias"), *q)[0].dtype,
        D::kF32);
    EXPECT_EQ(stored(find(t, "model.layers.1.self_attn.q_norm.weight"), *q),
              (std::vector<Stored>{{"model.layers.1.self_attn.q_norm.weight", D::kBF16, {6144}}}));
    EXPECT_EQ(stored(t.front(), *q)[0].dtype, D::kBF16);
    EXPECT_EQ(stored(t.back(), *q),
              (std::vector<Stored>{{"lm_head.weight", D::kBF16, {200064, 3072}}}));
  }
  EXPECT_EQ(stored(w1, none), (std::vector<Stored>{{w1.name, D::kBF16, {1536, 3072}}}));
}

TEST_F(TensorTableTest, StoredTensorsRejectWidthsTheBlockDoesNotDivide) {
  TensorSpec narrow{"model.layers.0.block_sparse_moe.experts.0.w2.weight",
                    TensorRole::kRoutedExpert,
                    {64, 48},
                    0,
                    0,
                    true,
                    {},
                    {}};
  QuantConfig mxfp4 = load_quant_config(fixture_dir("m2_mxfp4"));
  EXPECT_THAT([&] { stored_tensors(narrow, mxfp4); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr(
                  "tensor model.layers.0.block_sparse_moe.experts.0.w2.weight: input width 48 is "
                  "not a multiple of the mxfp4 block of 32")));
  narrow.shape = {64, 24};
  QuantConfig nvfp4 = load_quant_config(fixture_dir("m2_nvfp4"));
  EXPECT_THAT([&] { stored_tensors(narrow, nvfp4); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("the nvfp4 block of 16")));
  narrow.shape = {64, 48};
  EXPECT_EQ(stored_tensors(narrow, nvfp4).size(), 4u);
}

}  // namespace
}  // namespace minimax
