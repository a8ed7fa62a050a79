// Tiny configs: parse back, carry the real field set, and fit every quantization layout.
#include "checkpoint/tiny_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "checkpoint/quant_config.h"
#include "checkpoint/tensor_table.h"

namespace minimax {
namespace {

using nlohmann::json;

json real_fixture(const std::string& name) {
  return read_json_file(std::string(MINIMAX_TEST_DATA) + "/configs/" + name + "/config.json");
}

// Keys of `real` missing from `tiny`.
std::vector<std::string> missing_keys(const json& real, const json& tiny) {
  std::vector<std::string> missing;
  for (const auto& [key, value] : real.items())
    if (!tiny.contains(key)) missing.push_back(key);
  return missing;
}

TEST(TinyConfigTest, M2ParsesBack) {
  ModelConfig c = parse_model_config(tiny_config_json(Arch::kM2, 1000), "tiny");
  EXPECT_EQ(c.arch, Arch::kM2);
  EXPECT_EQ(c.vocab_size, 1000);
  EXPECT_EQ(c.num_layers, 3);
  EXPECT_EQ(c.hidden_size, 64);
  EXPECT_EQ(c.num_heads, 8);
  EXPECT_EQ(c.num_kv_heads, 2);
  EXPECT_EQ(c.head_dim, 16);
  EXPECT_EQ(c.rotary_dim, 8);
  EXPECT_EQ(c.num_experts, 16);
  EXPECT_EQ(c.experts_per_tok, 4);
  EXPECT_EQ(c.qk_norm, QkNormKind::kPerLayer);
  EXPECT_EQ(c.activation, Activation::kSilu);
  EXPECT_FALSE(c.sparse.enabled);
  EXPECT_TRUE(missing_keys(real_fixture("m2_bf16"), tiny_config_json(Arch::kM2, 1000)).empty());
}

TEST(TinyConfigTest, M3ParsesBack) {
  json tiny = tiny_config_json(Arch::kM3, 517);
  ModelConfig c = parse_model_config(tiny, "tiny");
  EXPECT_EQ(c.arch, Arch::kM3);
  EXPECT_EQ(c.vocab_size, 517);
  EXPECT_EQ(c.num_layers, 5);
  EXPECT_EQ(c.moe_layer, (std::vector<int>{0, 0, 0, 1, 1}));
  EXPECT_EQ(c.n_shared_experts, 1);
  EXPECT_EQ(c.qk_norm, QkNormKind::kPerHead);
  EXPECT_EQ(c.activation, Activation::kSwigluOai);
  EXPECT_TRUE(c.use_gemma_norm);
  EXPECT_EQ(c.routed_scaling_factor, 2.0);
  EXPECT_TRUE(c.sparse.enabled);
  EXPECT_EQ(c.sparse.layer_sparse, (std::vector<int>{0, 0, 0, 1, 1}));
  EXPECT_EQ(c.sparse.num_index_heads, c.num_kv_heads);
  EXPECT_EQ(c.sparse.block_size, 16);
  EXPECT_EQ(c.sparse.topk_blocks, 4);
  // Block selection only differs from dense attention once more than topk blocks are visible.
  EXPECT_LE(c.sparse.block_size * c.sparse.topk_blocks, 256);
  json real = real_fixture("m3_bf16");
  EXPECT_TRUE(missing_keys(real["text_config"], tiny["text_config"]).empty());
  EXPECT_TRUE(missing_keys(real["text_config"]["sparse_attention_config"],
                           tiny["text_config"]["sparse_attention_config"])
                  .empty());
  EXPECT_TRUE(missing_keys(real["vision_config"], tiny["vision_config"]).empty());
  EXPECT_THAT(missing_keys(real, tiny),
              ::testing::UnorderedElementsAre("image_token_index", "video_token_index"));
}

TEST(TinyConfigTest, EveryLayoutFits) {
  for (Arch arch : {Arch::kM2, Arch::kM3}) {
    ModelConfig model = parse_model_config(tiny_config_json(arch, 300), "tiny");
    for (QuantScheme scheme : {QuantScheme::kNone, QuantScheme::kFp8Block, QuantScheme::kFp8Channel,
                               QuantScheme::kMxfp4, QuantScheme::kNvfp4}) {
      SCOPED_TRACE(std::string(arch_name(arch)) + " " + std::string(quant_scheme_name(scheme)));
      json config = model.raw;
      if (scheme != QuantScheme::kNone)
        config["quantization_config"] = quantization_config_json(scheme, model);
      QuantConfig quant = detect_quantization(config, std::nullopt, "tiny/config.json");
      ASSERT_EQ(quant.scheme, scheme);
      int quantized = 0;
      for (const TensorSpec& spec : tensor_table(model)) {
        std::vector<StoredTensor> stored =
            stored_tensors(spec, quant);  // throws if a block misfits
        quantized += stored.size() > 1;
        if (spec.linear) {
          EXPECT_EQ(spec.shape[1] % 32, 0) << spec.name;
        }
      }
      if (scheme == QuantScheme::kNone) {
        EXPECT_EQ(quantized, 0);
      } else {
        EXPECT_GE(quantized, model.num_moe_layers() * model.num_experts * 3);
      }
    }
  }
}

TEST(TinyConfigTest, RejectsAnEmptyVocabulary) {
  EXPECT_THAT([] { tiny_config_json(Arch::kM2, 0); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("vocab_size must be positive")));
}

}  // namespace
}  // namespace minimax
