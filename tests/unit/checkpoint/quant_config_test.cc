// Quantization detection for every layout from realistic configs, and the configs we write.
#include "checkpoint/quant_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "base/error.h"
#include "checkpoint/tensor_table.h"
#include "config_fixtures.h"

namespace minimax {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string detect_error(const json& config, const std::optional<json>& hf = std::nullopt) {
  try {
    detect_quantization(config, hf, "ckpt/config.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
std::string detect_error_after(const std::string& name, const std::function<void(json&)>& edit) {
  json config = fixture(name);
  edit(config);
  return detect_error(config);
}

const char* kQProj0 = "model.layers.0.self_attn.q_proj";
const char* kExpertW2 = "model.layers.5.block_sparse_moe.experts.200.w2";
const char* kGate = "model.layers.5.block_sparse_moe.gate";

TEST(QuantConfigTest, SchemeNames) {
  EXPECT_EQ(quant_scheme_name(QuantScheme::kNone), "bf16");
  EXPECT_EQ(quant_scheme_name(QuantScheme::kFp8Block), "fp8-block");
  EXPECT_EQ(quant_scheme_name(QuantScheme::kFp8Channel), "fp8-channel");
  EXPECT_EQ(quant_scheme_name(QuantScheme::kMxfp4), "mxfp4");
  EXPECT_EQ(quant_scheme_name(QuantScheme::kNvfp4), "nvfp4");
  EXPECT_EQ(quant_scheme_name(QuantScheme::kMxfp8), "mxfp8");
  EXPECT_EQ(quant_scheme_name(QuantScheme::kMxfp4Fp8Attn), "mxfp4-fp8attn");
  EXPECT_EQ(parse_quant_scheme_name("nvfp4"), QuantScheme::kNvfp4);
  EXPECT_EQ(parse_quant_scheme_name("mxfp4-fp8attn"), QuantScheme::kMxfp4Fp8Attn);
  EXPECT_EQ(parse_quant_scheme_name("fp4"), std::nullopt);
  for (QuantScheme s : all_quant_schemes())
    EXPECT_EQ(parse_quant_scheme_name(quant_scheme_name(s)), s);
  EXPECT_EQ(linear_layout_name(LinearLayout::kQuarkFp8Channel), "quark-fp8-channel");
  EXPECT_EQ(linear_layout_name(LinearLayout::kMxfp8), "mxfp8");
}

// MiniMaxAI/MiniMax-M3-MXFP8's quantization_config as published (docs/checkpoint.md).
json m3_mxfp8_config() {
  json config = fixture("m3_bf16");
  config["quantization_config"] = {
      {"quant_method", "mxfp8"},
      {"activation_scheme", "dynamic"},
      {"weight_block_size", {1, 32}},
      {"ignored_layers", {"lm_head", "model.embed_tokens", "vision_tower"}}};
  return config;
}

TEST(QuantConfigTest, OfficialMxfp8) {
  const QuantConfig q = detect_quantization(m3_mxfp8_config(), std::nullopt, "m3/config.json");
  EXPECT_EQ(q.scheme, QuantScheme::kMxfp8);
  EXPECT_EQ(q.group_size, 32);
  EXPECT_TRUE(q.dynamic_activations);
  const std::string p = "language_model.model.layers.";
  for (const std::string m :
       {"0.self_attn.q_proj", "3.self_attn.index_k_proj", "0.mlp.down_proj",
        "3.block_sparse_moe.experts.7.w1", "3.block_sparse_moe.shared_experts.up_proj"})
    EXPECT_EQ(q.layout_of(p + m), LinearLayout::kMxfp8) << m;
  // ModelOpt-style matching (vLLM's reading): "lm_head" reaches language_model.lm_head.
  EXPECT_EQ(q.layout_of("language_model.lm_head"), LinearLayout::kBf16);
  EXPECT_EQ(q.layout_of("vision_tower.blocks.0.attn.qkv"), LinearLayout::kBf16);
  // modules_to_not_convert stands in when ignored_layers is empty (vLLM's fallback).
  json config = m3_mxfp8_config();
  config["quantization_config"]["ignored_layers"] = json::array();
  config["quantization_config"]["modules_to_not_convert"] = {"self_attn"};
  const QuantConfig fallback = detect_quantization(config, std::nullopt, "m3/config.json");
  EXPECT_EQ(fallback.layout_of(p + "0.self_attn.q_proj"), LinearLayout::kBf16);
  EXPECT_EQ(fallback.layout_of("language_model.lm_head"), LinearLayout::kMxfp8);

  auto error_with = [](const char* key, const json& value) {
    json c = m3_mxfp8_config();
    c["quantization_config"][key] = value;
    return detect_error(c);
  };
  EXPECT_THAT(error_with("activation_scheme", "static"),
              HasSubstr("field 'quantization_config.activation_scheme': 'static': MXFP8"));
  EXPECT_THAT(error_with("weight_block_size", {1, 16}),
              HasSubstr("field 'quantization_config.weight_block_size': MXFP8 blocks are 1x32"));
  EXPECT_THAT(error_with("scale_fmt", "fp32"), HasSubstr("'quantization_config.scale_fmt'"));
}

// amd/MiniMax-M3-MXFP4's recipe with AMD's FP8 ("ptpc_fp8") attention override.
json m3_fp8_attention_config(const json& weight_qscheme, bool static_input) {
  json config = fixture("m3_mxfp4");
  json& q = config["quantization_config"];
  json exclude = json::array();
  for (const json& e : q["exclude"])
    if (e != "*self_attn*") exclude.push_back(e);
  q["exclude"] = exclude;
  q["layer_quant_config"] = {{"*self_attn*",
                              {{"weight",
                                {{"dtype", "fp8_e4m3"},
                                 {"qscheme", weight_qscheme},
                                 {"ch_axis", 0},
                                 {"is_dynamic", false}}},
                               {"input_tensors",
                                {{"dtype", "fp8_e4m3"},
                                 {"qscheme", static_input ? "per_tensor" : "per_channel"},
                                 {"ch_axis", 1},
                                 {"is_dynamic", !static_input}}},
                               {"output_tensors", nullptr},
                               {"bias", nullptr}}}};
  return config;
}

TEST(QuantConfigTest, QuarkMxfp4WithFp8Attention) {
  const QuantConfig q =
      detect_quantization(m3_fp8_attention_config("per_channel", false), std::nullopt, "c.json");
  EXPECT_EQ(q.scheme, QuantScheme::kMxfp4Fp8Attn);
  ASSERT_EQ(q.fp8_layers.size(), 1u);
  EXPECT_TRUE(q.fp8_layers[0].per_channel);
  EXPECT_FALSE(q.fp8_layers[0].static_input);
  const std::string p = "language_model.model.layers.";
  EXPECT_EQ(q.layout_of(p + "0.self_attn.q_proj"), LinearLayout::kQuarkFp8Channel);
  EXPECT_EQ(q.layout_of(p + "4.self_attn.o_proj.weight"), LinearLayout::kQuarkFp8Channel);
  EXPECT_EQ(q.layout_of(p + "3.self_attn.index_q_proj"), LinearLayout::kQuarkFp8Channel);
  EXPECT_EQ(q.layout_of(p + "3.block_sparse_moe.experts.0.w2"), LinearLayout::kMxfp4);
  EXPECT_EQ(q.layout_of(p + "3.block_sparse_moe.shared_experts.gate_proj"), LinearLayout::kMxfp4);
  EXPECT_EQ(q.layout_of(p + "0.mlp.gate_proj"), LinearLayout::kBf16);  // excluded
  EXPECT_EQ(q.layout_of("language_model.lm_head"), LinearLayout::kBf16);

  // Exclusion wins over the override, as vLLM checks it first.
  json excluded = m3_fp8_attention_config("per_channel", false);
  excluded["quantization_config"]["exclude"].push_back("*o_proj");
  EXPECT_EQ(
      detect_quantization(excluded, std::nullopt, "c.json").layout_of(p + "0.self_attn.o_proj"),
      LinearLayout::kBf16);
  // A key without '*' names one module exactly.
  json exact = m3_fp8_attention_config("per_channel", false);
  exact["quantization_config"]["layer_quant_config"] = {
      {p + "1.self_attn.v_proj",
       exact["quantization_config"]["layer_quant_config"]["*self_attn*"]}};
  const QuantConfig one = detect_quantization(exact, std::nullopt, "c.json");
  EXPECT_EQ(one.layout_of(p + "1.self_attn.v_proj"), LinearLayout::kQuarkFp8Channel);
  EXPECT_EQ(one.layout_of(p + "11.self_attn.v_proj"), LinearLayout::kMxfp4);

  const QuantConfig tensor =
      detect_quantization(m3_fp8_attention_config("per_tensor", true), std::nullopt, "c.json");
  EXPECT_EQ(tensor.layout_of(p + "0.self_attn.k_proj"), LinearLayout::kQuarkFp8Tensor);
  EXPECT_TRUE(tensor.fp8_layers[0].static_input);

  json bad = m3_fp8_attention_config("per_group", false);
  EXPECT_THAT(detect_error(bad),
              HasSubstr("layer_quant_config.*self_attn*.weight.qscheme': 'per_group'"));
  bad = m3_fp8_attention_config("per_channel", false);
  bad["quantization_config"]["layer_quant_config"]["*self_attn*"]["input_tensors"]["dtype"] = "fp4";
  EXPECT_THAT(detect_error(bad), HasSubstr("input_tensors.dtype': FP8 weights need FP8"));
}

TEST(QuantConfigTest, Bf16) {
  QuantConfig q = load_quant_config(fixture_dir("m2_bf16"));
  EXPECT_EQ(q.scheme, QuantScheme::kNone);
  EXPECT_TRUE(q.raw.is_null());
  EXPECT_FALSE(q.is_quantized(kExpertW2));
  EXPECT_FALSE(q.is_quantized(kQProj0));
}

TEST(QuantConfigTest, OfficialFp8Block) {
  QuantConfig q = load_quant_config(fixture_dir("m2_fp8"));
  EXPECT_EQ(q.scheme, QuantScheme::kFp8Block);
  EXPECT_EQ(q.block_n, 128);
  EXPECT_EQ(q.block_k, 128);
  EXPECT_TRUE(q.dynamic_activations);
  EXPECT_EQ(q.fp8_flavor, "float8_e4m3fn");
  EXPECT_THAT(q.ignore, ElementsAre("gate", "e_score_correction_bias", "lm_head"));
  EXPECT_EQ(q.raw.at("quant_method"), "fp8");
  EXPECT_TRUE(q.is_quantized(kQProj0));
  EXPECT_TRUE(q.is_quantized("model.layers.61.self_attn.o_proj.weight"));  // ".weight" tolerated
  EXPECT_TRUE(q.is_quantized(kExpertW2));
  EXPECT_FALSE(q.is_quantized(kGate));
  EXPECT_FALSE(q.is_quantized("lm_head"));
  EXPECT_FALSE(q.is_quantized("lm_head.weight"));
}

TEST(QuantConfigTest, CompressedTensorsFp8Channel) {
  QuantConfig q = load_quant_config(fixture_dir("m2_fp8_channel"));
  EXPECT_EQ(q.scheme, QuantScheme::kFp8Channel);
  EXPECT_TRUE(q.dynamic_activations);
  EXPECT_THAT(q.targets, ElementsAre("Linear"));
  EXPECT_THAT(q.ignore, ElementsAre("lm_head", "re:.*block_sparse_moe\\.gate$"));
  EXPECT_EQ(q.fp8_flavor, "");
  EXPECT_TRUE(q.is_quantized(kQProj0));
  EXPECT_TRUE(q.is_quantized(kExpertW2));
  EXPECT_FALSE(q.is_quantized(kGate));
  EXPECT_FALSE(q.is_quantized("lm_head"));
  // Targets other than "Linear" restrict what is quantized.
  json config = fixture("m2_fp8_channel");
  config["quantization_config"]["config_groups"]["group_0"]["targets"] = {"re:.*experts.*"};
  config["quantization_config"]["fp8_dtype_flavor"] = "float8_e4m3fnuz";
  q = detect_quantization(config, std::nullopt, "x");
  EXPECT_FALSE(q.is_quantized(kQProj0));
  EXPECT_TRUE(q.is_quantized(kExpertW2));
  EXPECT_EQ(q.fp8_flavor, "float8_e4m3fnuz");
}

TEST(QuantConfigTest, QuarkMxfp4) {
  QuantConfig m2 = load_quant_config(fixture_dir("m2_mxfp4"));
  EXPECT_EQ(m2.scheme, QuantScheme::kMxfp4);
  EXPECT_EQ(m2.group_size, 32);
  EXPECT_TRUE(m2.dynamic_activations);
  EXPECT_FALSE(m2.is_quantized(kQProj0));
  EXPECT_TRUE(m2.is_quantized(kExpertW2));
  EXPECT_FALSE(m2.is_quantized(kGate));
  EXPECT_FALSE(m2.is_quantized("lm_head"));

  QuantConfig m3 = load_quant_config(fixture_dir("m3_mxfp4"));
  EXPECT_EQ(m3.scheme, QuantScheme::kMxfp4);
  const std::string p = "language_model.model.layers.";
  EXPECT_TRUE(m3.is_quantized(p + "3.block_sparse_moe.experts.0.w1"));
  EXPECT_TRUE(m3.is_quantized(p + "3.block_sparse_moe.shared_experts.gate_proj"));  // MXFP4 too
  EXPECT_FALSE(m3.is_quantized(p + "0.mlp.gate_proj"));
  EXPECT_FALSE(m3.is_quantized(p + "2.mlp.down_proj"));
  EXPECT_FALSE(m3.is_quantized(p + "3.block_sparse_moe.gate"));
  EXPECT_FALSE(m3.is_quantized(p + "3.self_attn.index_q_proj"));
  EXPECT_FALSE(m3.is_quantized("language_model.lm_head"));
  EXPECT_FALSE(m3.is_quantized("vision_tower.blocks.0.attn.qkv"));
}

TEST(QuantConfigTest, FindsAQuantizationConfigUnderTextConfig) {
  json config = fixture("m3_mxfp4");
  config["text_config"]["quantization_config"] = config["quantization_config"];
  config.erase("quantization_config");
  EXPECT_EQ(detect_quantization(config, std::nullopt, "x").scheme, QuantScheme::kMxfp4);
  config["text_config"]["quantization_config"]["quant_method"] = "gptq";
  EXPECT_THAT(detect_error(config),
              HasSubstr("field 'text_config.quantization_config.quant_method': 'gptq' is not"));
}

TEST(QuantConfigTest, ModelOptNvfp4BothFiles) {
  QuantConfig q = load_quant_config(fixture_dir("m2_nvfp4"));
  EXPECT_EQ(q.scheme, QuantScheme::kNvfp4);
  EXPECT_EQ(q.group_size, 16);
  EXPECT_FALSE(q.dynamic_activations);
  ASSERT_EQ(q.ignore.size(), 1u + 2 * 62);
  EXPECT_EQ(q.ignore[0], "lm_head");
  EXPECT_EQ(q.ignore[1], "model.layers.0.block_sparse_moe.gate");
  EXPECT_EQ(q.ignore[3], "model.layers.1.block_sparse_moe.gate");
  EXPECT_EQ(q.ignore[5], "model.layers.10.block_sparse_moe.gate");  // sorted as strings
  EXPECT_EQ(q.raw.at("quant_method"), "modelopt");
  for (int layer : {0, 1, 10, 61}) {
    std::string p = "model.layers." + std::to_string(layer) + ".";
    EXPECT_FALSE(q.is_quantized(p + "self_attn.q_proj")) << layer;
    EXPECT_FALSE(q.is_quantized(p + "block_sparse_moe.gate")) << layer;
    EXPECT_TRUE(q.is_quantized(p + "block_sparse_moe.experts.17.w3")) << layer;
  }
  EXPECT_FALSE(q.is_quantized("lm_head"));
}

TEST(QuantConfigTest, ModelOptLegacyFileOnly) {
  QuantConfig q = load_quant_config(fixture_dir("m2_nvfp4_legacy"));
  EXPECT_EQ(q.scheme, QuantScheme::kNvfp4);
  EXPECT_EQ(q.ignore.size(), 125u);
  EXPECT_EQ(q.raw.at("producer").at("name"), "modelopt");
  EXPECT_FALSE(q.is_quantized("model.layers.33.self_attn.k_proj"));
  EXPECT_TRUE(q.is_quantized("model.layers.33.block_sparse_moe.experts.0.w1"));
}

TEST(QuantConfigTest, ContradictingFilesAreAnError) {
  EXPECT_THAT([] { load_quant_config(fixture_dir("bad_quant_mismatch")); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("bad_quant_mismatch/hf_quant_config.json: says nvfp4 but " +
                            fixture_dir("bad_quant_mismatch") + "/config.json says fp8-block")));
}

TEST(QuantConfigTest, UnsupportedVariantsNameTheField) {
  EXPECT_THAT(detect_error_after(
                  "m2_fp8", [](json& c) { c["quantization_config"]["quant_method"] = "gptq"; }),
              HasSubstr("ckpt/config.json: field 'quantization_config.quant_method': 'gptq' is not "
                        "supported"));
  EXPECT_THAT(
      detect_error_after("m2_fp8", [](json& c) { c["quantization_config"].erase("quant_method"); }),
      HasSubstr("field 'quantization_config.quant_method': required but missing"));
  EXPECT_THAT(detect_error_after(
                  "m2_fp8", [](json& c) { c["quantization_config"].erase("weight_block_size"); }),
              HasSubstr("field 'quantization_config.weight_block_size': missing: per-tensor FP8"));
  EXPECT_THAT(detect_error_after(
                  "m2_fp8", [](json& c) { c["quantization_config"]["weight_block_size"] = {128}; }),
              HasSubstr("field 'quantization_config.weight_block_size': must be [n, k]"));
  EXPECT_THAT(
      detect_error_after(
          "m2_fp8", [](json& c) { c["quantization_config"]["modules_to_not_convert"] = "gate"; }),
      HasSubstr("field 'quantization_config.modules_to_not_convert': must be a list"));
  EXPECT_THAT(detect_error_after(
                  "m2_fp8_channel",
                  [](json& c) {
                    c["quantization_config"]["config_groups"]["group_0"]["weights"]["strategy"] =
                        "tensor";
                  }),
              HasSubstr("field 'quantization_config.config_groups.group_0.weights.strategy': only "
                        "per-channel"));
  EXPECT_THAT(detect_error_after("m2_fp8_channel",
                                 [](json& c) {
                                   c["quantization_config"]["config_groups"]["group_0"]["format"] =
                                       "nvfp4-pack-quantized";
                                 }),
              HasSubstr("group_0.format': 'nvfp4-pack-quantized' is not supported"));
  EXPECT_THAT(detect_error_after(
                  "m2_fp8_channel",
                  [](json& c) { c["quantization_config"]["quantization_status"] = "frozen"; }),
              HasSubstr("field 'quantization_config.quantization_status'"));
  EXPECT_THAT(
      detect_error_after("m2_mxfp4",
                         [](json& c) {
                           c["quantization_config"]["global_quant_config"]["weight"]["dtype"] =
                               "fp8_e4m3";
                         }),
      HasSubstr("field 'quantization_config.global_quant_config.weight.dtype': only MXFP4"));
  EXPECT_THAT(
      detect_error_after("m2_mxfp4", [](json& c) { c["quantization_config"].erase("export"); }),
      HasSubstr("field 'quantization_config.export': required but missing"));
  EXPECT_THAT(
      detect_error_after(
          "m2_mxfp4",
          [](json& c) {
            c["quantization_config"]["layer_quant_config"] = {{"*w2", json::object()}};
          }),
      HasSubstr("field 'quantization_config.layer_quant_config.*w2.weight': required but missing"));
  EXPECT_THAT(
      detect_error_after("m2_mxfp4",
                         [](json& c) {
                           c["quantization_config"]["layer_quant_config"] = {
                               {"*self_attn*", {{"weight", {{"dtype", "int8"}}}}}};
                         }),
      HasSubstr("field 'quantization_config.layer_quant_config.*self_attn*.weight.dtype': only FP8 "
                "per-layer overrides"));
  EXPECT_THAT(
      detect_error_after(
          "m2_mxfp4",
          [](json& c) {
            c["quantization_config"]["layer_type_quant_config"] = {{"Linear", json::object()}};
          }),
      HasSubstr("field 'quantization_config.layer_type_quant_config': per-module-type overrides"));
  EXPECT_THAT(detect_error_after("m2_nvfp4",
                                 [](json& c) { c["quantization_config"]["quant_algo"] = "fp8"; }),
              HasSubstr("field 'quantization_config.quant_algo': 'FP8' is not supported"));
  json hf = read_json_file(fixture_dir("m2_nvfp4") + "/hf_quant_config.json");
  hf["quantization"]["group_size"] = 32;
  EXPECT_THAT(detect_error(fixture("m2_bf16"), hf),
              HasSubstr("ckpt/hf_quant_config.json: field 'quantization.group_size': 32 is not"));
}

// Per role: how many of the table's tensors a scheme stores quantized.
std::map<TensorRole, int> quantized_by_role(const ModelConfig& model, const QuantConfig& quant) {
  std::map<TensorRole, int> counts;
  for (const TensorSpec& spec : tensor_table(model))
    if (spec.linear && quant.is_quantized(spec.name)) ++counts[spec.role];
  return counts;
}

// The configs we write, read back by our own detection: each quantizes what its release does.
TEST(QuantConfigTest, WrittenConfigsReadBack) {
  ModelConfig m2 = load_model_config(fixture_dir("m2_bf16"));
  ModelConfig m3 = load_model_config(fixture_dir("m3_bf16"));
  const int m2_experts = 62 * 256 * 3, m3_experts = 57 * 128 * 3;
  using R = TensorRole;
  struct Case {
    QuantScheme scheme;
    const ModelConfig* model;
    std::map<TensorRole, int> quantized;
  };
  // Block FP8 and MXFP8 quantize every Linear but the router.
  const std::map<TensorRole, int> m3_every_linear = {{R::kAttention, 60 * 4},
                                                     {R::kIndexBranch, 57 * 2},
                                                     {R::kDenseFfn, 3 * 3},
                                                     {R::kRoutedExpert, m3_experts},
                                                     {R::kSharedExpert, 57 * 3}};
  const std::vector<Case> cases = {
      {QuantScheme::kFp8Block, &m2, {{R::kAttention, 62 * 4}, {R::kRoutedExpert, m2_experts}}},
      {QuantScheme::kFp8Block, &m3, m3_every_linear},
      {QuantScheme::kFp8Channel, &m2, {{R::kRoutedExpert, m2_experts}}},
      {QuantScheme::kFp8Channel, &m3, {{R::kRoutedExpert, m3_experts}}},
      {QuantScheme::kMxfp4, &m2, {{R::kRoutedExpert, m2_experts}}},
      {QuantScheme::kMxfp4, &m3, {{R::kRoutedExpert, m3_experts}, {R::kSharedExpert, 57 * 3}}},
      {QuantScheme::kNvfp4, &m2, {{R::kRoutedExpert, m2_experts}}},
      {QuantScheme::kNvfp4, &m3, {{R::kRoutedExpert, m3_experts}, {R::kSharedExpert, 57 * 3}}},
      {QuantScheme::kMxfp8, &m2, {{R::kAttention, 62 * 4}, {R::kRoutedExpert, m2_experts}}},
      {QuantScheme::kMxfp8, &m3, m3_every_linear},
      {QuantScheme::kMxfp4Fp8Attn, &m2, {{R::kAttention, 62 * 4}, {R::kRoutedExpert, m2_experts}}},
      {QuantScheme::kMxfp4Fp8Attn,
       &m3,
       {{R::kAttention, 60 * 4},
        {R::kIndexBranch, 57 * 2},
        {R::kRoutedExpert, m3_experts},
        {R::kSharedExpert, 57 * 3}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(quant_scheme_name(c.scheme)) + " " +
                 std::string(arch_name(c.model->arch)));
    json config = c.model->raw;
    config["quantization_config"] = quantization_config_json(c.scheme, *c.model);
    QuantConfig q = detect_quantization(config, std::nullopt, "written/config.json");
    EXPECT_EQ(q.scheme, c.scheme);
    EXPECT_EQ(quantized_by_role(*c.model, q), c.quantized);
    if (c.model->arch == Arch::kM3) {
      EXPECT_FALSE(q.is_quantized("vision_tower.blocks.0.mlp.fc1"));
    }
    if (c.scheme == QuantScheme::kMxfp4Fp8Attn) {  // attention FP8, experts MXFP4
      EXPECT_EQ(q.layout_of(c.model->tensor_prefix + "layers.1.self_attn.o_proj"),
                LinearLayout::kQuarkFp8Channel);
      EXPECT_EQ(q.layout_of(c.model->tensor_prefix + "layers.3.block_sparse_moe.experts.1.w3"),
                LinearLayout::kMxfp4);
    }
  }
  EXPECT_TRUE(quantization_config_json(QuantScheme::kNone, m2).is_null());
}

TEST(QuantConfigTest, WrittenFp8ChannelIsFp8Dynamic) {
  ModelConfig m2 = load_model_config(fixture_dir("m2_bf16"));
  json q = quantization_config_json(QuantScheme::kFp8Channel, m2);
  const json& group = q.at("config_groups").at("group_0");
  EXPECT_EQ(group.at("weights").at("strategy"), "channel");
  EXPECT_EQ(group.at("weights").at("dynamic"), false);
  EXPECT_EQ(group.at("input_activations").at("strategy"), "token");
  EXPECT_EQ(group.at("input_activations").at("dynamic"), true);
  EXPECT_EQ(q.at("format"), "float-quantized");
  // Every non-expert Linear by name: 62 x (4 attention + router) + lm_head.
  const json& ignore = q.at("ignore");
  EXPECT_EQ(ignore.size(), 62u * 5 + 1);
  EXPECT_EQ(ignore[0], "model.layers.0.self_attn.q_proj");
  EXPECT_EQ(ignore.back(), "lm_head");
  for (const json& entry : ignore)
    EXPECT_EQ(entry.get<std::string>().find("experts"), std::string::npos);
}

TEST(QuantConfigTest, WrittenModelOptLegacyFileAgrees) {
  ModelConfig m3 = load_model_config(fixture_dir("m3_bf16"));
  json hf = hf_quant_config_json(m3);
  EXPECT_EQ(hf.at("quantization").at("quant_algo"), "NVFP4");
  QuantConfig legacy = detect_quantization(m3.raw, hf, "x/config.json");
  json config = m3.raw;
  config["quantization_config"] = quantization_config_json(QuantScheme::kNvfp4, m3);
  QuantConfig both = detect_quantization(config, hf, "x/config.json");
  EXPECT_EQ(legacy.scheme, QuantScheme::kNvfp4);
  EXPECT_EQ(both.scheme, QuantScheme::kNvfp4);
  EXPECT_EQ(legacy.ignore, both.ignore);
  EXPECT_EQ(quantized_by_role(m3, legacy), quantized_by_role(m3, both));
}

}  // namespace
}  // namespace minimax
