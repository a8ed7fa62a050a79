// config.json parsing: the committed real-shaped fixtures, and every validation error's message.
#include "checkpoint/model_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "base/error.h"
#include "config_fixtures.h"

namespace minimax {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// The message parse_model_config throws for `config`, or "" when it parses.
std::string parse_error(const json& config) {
  try {
    parse_model_config(config, "ckpt/config.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
// The error after applying `edit` to a copy of fixture `name`.
std::string parse_error_after(const std::string& name, const std::function<void(json&)>& edit) {
  json config = fixture(name);
  edit(config);
  return parse_error(config);
}

TEST(ModelConfigTest, ParsesM2Fixture) {
  ModelConfig c = load_model_config(fixture_dir("m2_bf16"));
  EXPECT_EQ(c.arch, Arch::kM2);
  EXPECT_EQ(c.architecture, "MiniMaxM2ForCausalLM");
  EXPECT_EQ(c.model_type, "minimax_m2");
  EXPECT_EQ(c.hidden_size, 3072);
  EXPECT_EQ(c.num_layers, 62);
  EXPECT_EQ(c.num_heads, 48);
  EXPECT_EQ(c.num_kv_heads, 8);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.rotary_dim, 64);
  EXPECT_EQ(c.rope_theta, 5e6);
  EXPECT_EQ(c.rms_norm_eps, 1e-6);
  EXPECT_EQ(c.vocab_size, 200064);
  EXPECT_EQ(c.max_position_embeddings, 196608);
  EXPECT_EQ(c.intermediate_size, 1536);
  EXPECT_EQ(c.num_experts, 256);
  EXPECT_EQ(c.experts_per_tok, 8);
  EXPECT_EQ(c.n_shared_experts, 0);
  EXPECT_EQ(c.shared_intermediate_size, 0);
  EXPECT_EQ(c.moe_layer, std::vector<int>(62, 1));
  EXPECT_EQ(c.num_moe_layers(), 62);
  EXPECT_EQ(c.routed_scaling_factor, 1.0);  // absent in M2: no routed scaling
  EXPECT_TRUE(c.use_routing_bias);
  EXPECT_EQ(c.scoring_func, "sigmoid");
  EXPECT_FALSE(c.use_gemma_norm);
  EXPECT_TRUE(c.use_qk_norm);
  EXPECT_EQ(c.qk_norm, QkNormKind::kPerLayer);
  EXPECT_EQ(c.activation, Activation::kSilu);
  EXPECT_FALSE(c.sparse.enabled);
  EXPECT_EQ(c.sparse.layer_sparse, std::vector<int>(62, 0));
  EXPECT_EQ(c.num_mtp_modules, 3);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_EQ(c.bos_token_id, -1);  // the M2.5 config has no ids
  EXPECT_EQ(c.eos_token_id, -1);
  EXPECT_EQ(c.tensor_prefix, "model.");
  EXPECT_EQ(c.lm_head_name, "lm_head.weight");
  EXPECT_EQ(c.raw.at("transformers_version"), "4.46.1");
}

TEST(ModelConfigTest, ParsesM3Fixture) {
  ModelConfig c = load_model_config(fixture_dir("m3_bf16"));
  EXPECT_EQ(c.arch, Arch::kM3);
  EXPECT_EQ(c.architecture, "MiniMaxM3SparseForConditionalGeneration");
  EXPECT_EQ(c.model_type, "minimax_m3_vl");
  EXPECT_EQ(c.hidden_size, 6144);
  EXPECT_EQ(c.num_layers, 60);
  EXPECT_EQ(c.num_heads, 64);
  EXPECT_EQ(c.num_kv_heads, 4);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.rotary_dim, 64);
  EXPECT_EQ(c.max_position_embeddings, 1048576);
  EXPECT_EQ(c.intermediate_size, 3072);
  EXPECT_EQ(c.dense_intermediate_size, 12288);
  EXPECT_EQ(c.shared_intermediate_size, 3072);
  EXPECT_EQ(c.n_shared_experts, 1);
  EXPECT_EQ(c.num_experts, 128);
  EXPECT_EQ(c.experts_per_tok, 4);
  EXPECT_EQ(c.routed_scaling_factor, 2.0);
  EXPECT_TRUE(c.use_gemma_norm);
  EXPECT_EQ(c.qk_norm, QkNormKind::kPerHead);
  EXPECT_EQ(c.activation, Activation::kSwigluOai);
  EXPECT_EQ(c.swiglu_alpha, 1.702);
  EXPECT_EQ(c.swiglu_limit, 7.0);
  EXPECT_EQ(c.swiglu_beta, 1.0);  // absent in the file: the OAI +1
  EXPECT_EQ(c.num_moe_layers(), 57);
  EXPECT_FALSE(c.is_moe_layer(2));
  EXPECT_TRUE(c.is_moe_layer(3));
  EXPECT_TRUE(c.sparse.enabled);
  EXPECT_EQ(c.sparse.index_dim, 128);
  EXPECT_EQ(c.sparse.num_index_heads, 4);
  EXPECT_EQ(c.sparse.block_size, 128);
  EXPECT_EQ(c.sparse.topk_blocks, 16);
  EXPECT_EQ(c.sparse.score_type, "max");
  EXPECT_EQ(c.sparse.init_blocks, 0);
  EXPECT_EQ(c.sparse.local_blocks, 1);
  EXPECT_FALSE(c.is_sparse_layer(2));
  EXPECT_TRUE(c.is_sparse_layer(59));
  EXPECT_EQ(c.sparse.disable_index_value, c.sparse.layer_sparse);
  EXPECT_EQ(c.num_mtp_modules, 7);
  EXPECT_EQ(c.tensor_prefix, "language_model.model.");
  EXPECT_EQ(c.lm_head_name, "language_model.lm_head.weight");
}

TEST(ModelConfigTest, KeepsTheConfigsTokenIdsEvenWhenWrong) {
  // The M2.7 NVFP4 re-export writes bos 1 / eos 2 (spec §6 item 11); they are kept as written.
  ModelConfig c = load_model_config(fixture_dir("m2_nvfp4"));
  EXPECT_EQ(c.bos_token_id, 1);
  EXPECT_EQ(c.eos_token_id, 2);
  json config = fixture("m3_bf16");
  config["text_config"]["eos_token_id"] = {200020, 200053};
  EXPECT_EQ(parse_model_config(config, "x").eos_token_id, 200020);
}

TEST(ModelConfigTest, ReadsRopeFromRopeParameters) {
  json config = fixture("m2_nvfp4");
  config.erase("rotary_dim");
  config.erase("partial_rotary_factor");
  config["rope_parameters"]["rope_theta"] = 1234567;
  EXPECT_THAT(
      parse_error(config),
      HasSubstr("field 'rope_theta': 5000000 contradicts rope_parameters.rope_theta 1234567"));
  config.erase("rope_theta");
  ModelConfig c = parse_model_config(config, "x");
  EXPECT_EQ(c.rotary_dim, 64);  // 0.5 x head_dim 128
  EXPECT_EQ(c.rope_theta, 1234567.0);
  config["rope_parameters"]["partial_rotary_factor"] = 0.3;
  EXPECT_THAT(
      parse_error(config),
      HasSubstr("field 'rope_parameters.partial_rotary_factor': 0.3 x head_dim 128 is not a "
                "whole number"));
}

TEST(ModelConfigTest, TopLevelFieldErrors) {
  EXPECT_THAT(
      parse_error_after("m2_bf16",
                        [](json& c) { c["architectures"] = {"MiniMaxText01ForCausalLM"}; }),
      HasSubstr("ckpt/config.json: field 'architectures': 'MiniMaxText01ForCausalLM' is not "
                "supported"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c.erase("architectures"); }),
              HasSubstr("field 'architectures': required but missing"));
  EXPECT_THAT(
      parse_error_after("m2_bf16", [](json& c) { c["architectures"] = "MiniMaxM2ForCausalLM"; }),
      HasSubstr("field 'architectures': must be a non-empty list of strings"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["model_type"] = "minimax_m3_vl"; }),
              HasSubstr("field 'model_type': 'minimax_m3_vl' does not match architecture "
                        "MiniMaxM2ForCausalLM"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c.erase("model_type"); }),
              HasSubstr("field 'model_type': required but missing"));
  EXPECT_THAT(parse_error(json::array()),
              HasSubstr("ckpt/config.json: config.json must be a JSON"));
}

TEST(ModelConfigTest, MissingAndMistypedFields) {
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c.erase("hidden_size"); }),
              HasSubstr("ckpt/config.json: field 'hidden_size': required but missing"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["vocab_size"] = nullptr; }),
              HasSubstr("field 'vocab_size': required but missing"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c.erase("head_dim"); }),
              HasSubstr("field 'head_dim': required but missing"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["hidden_size"] = "3072"; }),
              HasSubstr("field 'hidden_size': must be an integer, got string \"3072\""));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["head_dim"] = 128.5; }),
              HasSubstr("field 'head_dim': must be an integer, got number 128.5"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["num_attention_heads"] = -48; }),
              HasSubstr("field 'num_attention_heads': must be positive, got -48"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["num_hidden_layers"] = 1ll << 40; }),
              HasSubstr("field 'num_hidden_layers': integer 1099511627776 out of range"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["use_qk_norm"] = "yes"; }),
              HasSubstr("field 'use_qk_norm': must be true or false"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["rope_theta"] = "5e6"; }),
              HasSubstr("field 'rope_theta': must be a number"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["hidden_act"] = 7; }),
              HasSubstr("field 'hidden_act': must be a string"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c.erase("rope_theta"); }),
              HasSubstr("field 'rope_theta': required but missing"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c.erase("rotary_dim"); }),
              HasSubstr("field 'rotary_dim': required but missing"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["eos_token_id"] = "</s>"; }),
              HasSubstr("field 'eos_token_id': must be a token id"));
}

TEST(ModelConfigTest, Contradictions) {
  EXPECT_THAT(
      parse_error_after("m2_bf16", [](json& c) { c["num_key_value_heads"] = 7; }),
      HasSubstr("field 'num_attention_heads': 48 is not divisible by num_key_value_heads 7"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["num_experts_per_tok"] = 300; }),
              HasSubstr("field 'num_experts_per_tok': 300 is more than num_local_experts 256"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["rotary_dim"] = 130; }),
              HasSubstr("field 'rotary_dim': 130 is larger than head_dim 128"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["rotary_dim"] = 63; }),
              HasSubstr("field 'rotary_dim': must be positive and even, got 63"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["partial_rotary_factor"] = 1.0; }),
              HasSubstr("field 'rotary_dim': 64 contradicts partial_rotary_factor 1"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["hidden_act"] = "swigluoai"; }),
              HasSubstr("field 'hidden_act': 'swigluoai' does not match MiniMaxM2ForCausalLM"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["qk_norm_type"] = "per_head"; }),
              HasSubstr("field 'qk_norm_type': 'per_head' does not match MiniMaxM2ForCausalLM"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["attn_type_list"].erase(0); }),
              HasSubstr("field 'attn_type_list': has 61 entries but num_hidden_layers is 62"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["attn_type_list"][5] = 0; }),
              HasSubstr("field 'attn_type_list': layer 5 asks for linear attention"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["scoring_func"] = "softmax"; }),
              HasSubstr("field 'scoring_func': 'softmax' is not supported"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["rms_norm_eps"] = 0; }),
              HasSubstr("field 'rms_norm_eps': must be positive"));
  EXPECT_THAT(
      parse_error_after("m2_bf16", [](json& c) { c["shared_intermediate_size"] = 1024; }),
      HasSubstr("field 'shared_intermediate_size': 1024 but the architecture has no shared"));
  EXPECT_THAT(parse_error_after("m2_bf16", [](json& c) { c["use_gemma_norm"] = true; }),
              HasSubstr("field 'use_gemma_norm'"));
  EXPECT_THAT(parse_error_after("m2_bf16",
                                [](json& c) {
                                  c["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 2}};
                                }),
              HasSubstr("field 'rope_scaling.rope_type': 'yarn' RoPE scaling is not supported"));
  EXPECT_THAT(parse_error_after("m2_bf16",
                                [](json& c) {
                                  c["sparse_attention_config"] =
                                      fixture("m3_bf16")["text_config"]["sparse_attention_config"];
                                }),
              HasSubstr("field 'sparse_attention_config.use_sparse_attention': M2 has no sparse"));
}

TEST(ModelConfigTest, M3Errors) {
  EXPECT_THAT(parse_error_after("m3_bf16", [](json& c) { c.erase("text_config"); }),
              HasSubstr("ckpt/config.json: field 'text_config': required but missing"));
  EXPECT_THAT(parse_error_after("m3_bf16", [](json& c) { c["model_type"] = "minimax_m2"; }),
              HasSubstr("field 'model_type': 'minimax_m2' does not match architecture "
                        "MiniMaxM3SparseForConditionalGeneration (expects 'minimax_m3_vl')"));
  EXPECT_THAT(
      parse_error_after("m3_bf16", [](json& c) { c["text_config"]["moe_layer_freq"].erase(0); }),
      HasSubstr("field 'text_config.moe_layer_freq': has 59 entries but num_hidden_layers "
                "is 60"));
  EXPECT_THAT(
      parse_error_after("m3_bf16", [](json& c) { c["text_config"]["moe_layer_freq"][7] = 2; }),
      HasSubstr("field 'text_config.moe_layer_freq': entry 7 must be 0 or 1, got 2"));
  EXPECT_THAT(
      parse_error_after("m3_bf16", [](json& c) { c["text_config"].erase("moe_layer_freq"); }),
      HasSubstr("field 'text_config.moe_layer_freq': required but missing"));
  EXPECT_THAT(
      parse_error_after("m3_bf16",
                        [](json& c) {
                          c["text_config"]["sparse_attention_config"]["sparse_attention_freq"] =
                              std::vector<int>(10, 1);
                        }),
      HasSubstr("field 'text_config.sparse_attention_config.sparse_attention_freq': has 10 "
                "entries but num_hidden_layers is 60"));
  EXPECT_THAT(
      parse_error_after("m3_bf16", [](json& c) { c["text_config"]["hidden_act"] = "silu"; }),
      HasSubstr("field 'text_config.hidden_act': 'silu' does not match "
                "MiniMaxM3SparseForConditionalGeneration (expects 'swigluoai')"));
  EXPECT_THAT(
      parse_error_after("m3_bf16", [](json& c) { c["text_config"]["qk_norm_type"] = "per_layer"; }),
      HasSubstr("field 'text_config.qk_norm_type'"));
  EXPECT_THAT(
      parse_error_after("m3_bf16",
                        [](json& c) {
                          c["text_config"]["sparse_attention_config"]["sparse_num_index_heads"] = 8;
                        }),
      HasSubstr("sparse_num_index_heads': 8 must equal num_key_value_heads 4"));
  EXPECT_THAT(parse_error_after(
                  "m3_bf16",
                  [](json& c) {
                    c["text_config"]["sparse_attention_config"]["sparse_disable_index_value"][10] =
                        0;
                  }),
              HasSubstr("sparse_disable_index_value': layer 10 is sparse with the index value "
                        "branch enabled"));
  EXPECT_THAT(parse_error_after("m3_bf16",
                                [](json& c) {
                                  c["text_config"]["sparse_attention_config"]["sparse_score_type"] =
                                      "mean";
                                }),
              HasSubstr("sparse_score_type': 'mean' is not supported"));
  EXPECT_THAT(
      parse_error_after("m3_bf16",
                        [](json& c) {
                          c["text_config"]["sparse_attention_config"]["sparse_topk_blocks"] = 1;
                          c["text_config"]["sparse_attention_config"]["sparse_init_block"] = 1;
                        }),
      HasSubstr("sparse_topk_blocks': 1 is less than the forced init (1) + local (1)"));
  EXPECT_THAT(
      parse_error_after(
          "m3_bf16",
          [](json& c) { c["text_config"]["sparse_attention_config"].erase("sparse_block_size"); }),
      HasSubstr("field 'text_config.sparse_attention_config.sparse_block_size': required"));
  EXPECT_THAT(
      parse_error_after("m3_bf16",
                        [](json& c) { c["text_config"].erase("dense_intermediate_size"); }),
      HasSubstr("field 'text_config.dense_intermediate_size': must be positive when a layer "
                "has a dense FFN"));
  EXPECT_THAT(
      parse_error_after("m3_bf16", [](json& c) { c["text_config"]["n_shared_experts"] = 2; }),
      HasSubstr("field 'text_config.n_shared_experts': 2 is not supported"));
  EXPECT_THAT(
      parse_error_after("m3_bf16", [](json& c) { c["text_config"]["num_key_value_heads"] = 3; }),
      HasSubstr("field 'text_config.num_attention_heads': 64 is not divisible"));
}

TEST(ModelConfigTest, SparseAttentionCanBeSwitchedOff) {
  json config = fixture("m3_bf16");
  config["text_config"]["sparse_attention_config"]["use_sparse_attention"] = false;
  ModelConfig c = parse_model_config(config, "x");
  EXPECT_FALSE(c.sparse.enabled);
  EXPECT_EQ(c.sparse.layer_sparse, std::vector<int>(60, 0));
}

TEST(ModelConfigTest, LoadErrorsNameThePath) {
  std::string missing = fixture_dir("no_such_checkpoint");
  EXPECT_THAT([&] { load_model_config(missing); },
              ::testing::ThrowsMessage<Error>(HasSubstr(missing + "/config.json: cannot open")));
  std::string bad = fixture_dir("bad_json") + "/config.json";
  EXPECT_THAT([&] { load_model_config(fixture_dir("bad_json")); },
              ::testing::ThrowsMessage<Error>(HasSubstr(bad + ": not valid JSON")));
  EXPECT_THAT([&] { load_model_config(fixture_dir("bad_unknown_arch")); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("bad_unknown_arch/config.json: field 'architectures'")));
}

}  // namespace
}  // namespace minimax
