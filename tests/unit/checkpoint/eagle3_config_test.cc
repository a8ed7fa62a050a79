// EAGLE-3 head config.json: the published fields, vLLM's defaults, and named refusals.
#include "checkpoint/eagle3_config.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace minimax {
namespace {

using nlohmann::json;

// A head for a 62-layer target 3072 wide with 200064 tokens, as the M2.x heads are published.
json m2_eagle3_head() {
  return json{{"architectures", {"LlamaForCausalLMEagle3"}},
              {"hidden_size", 3072},
              {"intermediate_size", 8192},
              {"num_hidden_layers", 1},
              {"num_attention_heads", 24},
              {"num_key_value_heads", 8},
              {"head_dim", 128},
              {"rms_norm_eps", 1e-6},
              {"rope_theta", 5000000},
              {"hidden_act", "silu"},
              {"vocab_size", 200064},
              {"draft_vocab_size", 32000}};
}

std::string eagle3_config_error(const json& config, int layers = 62, int hidden = 3072,
                                int vocab = 200064) {
  try {
    parse_eagle3_config(config, "head/config.json", layers, hidden, vocab);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Eagle3ConfigTest, ReadsThePublishedFieldsWithVllmDefaults) {
  const Eagle3Config c =
      parse_eagle3_config(m2_eagle3_head(), "head/config.json", 62, 3072, 200064);
  EXPECT_EQ(c.architecture, "LlamaForCausalLMEagle3");
  EXPECT_EQ(c.hidden_size, 3072);
  EXPECT_EQ(c.num_heads, 24);
  EXPECT_EQ(c.num_kv_heads, 8);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_EQ(c.draft_vocab_size, 32000);
  EXPECT_EQ(c.target_hidden_size, 3072);
  EXPECT_DOUBLE_EQ(c.rope_theta, 5000000);
  EXPECT_EQ(c.tap_layers, (std::vector<int>{2, 31, 59}));  // 2, L/2, L-3 for M2.x
  EXPECT_FALSE(c.norm_before_residual);
  EXPECT_EQ(default_eagle3_tap_layers(60), (std::vector<int>{2, 30, 57}));  // M3

  json named = m2_eagle3_head();
  named["eagle_config"] = {{"eagle_aux_hidden_state_layer_ids", {1, 29, 58}},
                           {"use_aux_hidden_state", true}};
  named["norm_before_residual"] = true;
  named.erase("draft_vocab_size");
  const Eagle3Config n = parse_eagle3_config(named, "head/config.json", 62, 3072, 200064);
  EXPECT_EQ(n.tap_layers, (std::vector<int>{1, 29, 58}));
  EXPECT_TRUE(n.norm_before_residual);
  EXPECT_EQ(n.draft_vocab_size, 200064);  // the target's vocabulary when absent
}

TEST(Eagle3ConfigTest, RefusesWhatTheForwardPassWouldNotComputeAsPublished) {
  json c = m2_eagle3_head();
  c["architectures"] = {"LlamaForCausalLM"};
  EXPECT_NE(eagle3_config_error(c).find("not an EAGLE-3 head"), std::string::npos)
      << eagle3_config_error(c);
  c = m2_eagle3_head();
  c["num_hidden_layers"] = 2;
  EXPECT_NE(eagle3_config_error(c).find("'num_hidden_layers' is 2"), std::string::npos)
      << eagle3_config_error(c);
  c = m2_eagle3_head();
  c["hidden_act"] = "gelu";
  EXPECT_NE(eagle3_config_error(c).find("'hidden_act'"), std::string::npos)
      << eagle3_config_error(c);
  c = m2_eagle3_head();
  c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
  EXPECT_NE(eagle3_config_error(c).find("'rope_scaling'"), std::string::npos)
      << eagle3_config_error(c);
  c = m2_eagle3_head();
  c["attention_bias"] = true;
  EXPECT_NE(eagle3_config_error(c).find("'attention_bias'"), std::string::npos)
      << eagle3_config_error(c);
  c = m2_eagle3_head();
  c["eagle_config"] = {{"eagle_aux_hidden_state_layer_ids", {2, 31, 62}}};
  EXPECT_NE(eagle3_config_error(c).find("tapped layer 62 is outside"), std::string::npos)
      << eagle3_config_error(c);
  c = m2_eagle3_head();
  c["eagle_config"] = {{"use_aux_hidden_state", false}};
  EXPECT_NE(eagle3_config_error(c).find("use_aux_hidden_state"), std::string::npos)
      << eagle3_config_error(c);
  // A head for another target.
  EXPECT_NE(eagle3_config_error(m2_eagle3_head(), 62, 3072, 151936).find("'vocab_size' is 200064"),
            std::string::npos);
  EXPECT_NE(eagle3_config_error(m2_eagle3_head(), 60, 6144).find("hidden states 3072 wide"),
            std::string::npos);
  c = m2_eagle3_head();
  c["draft_vocab_size"] = 300000;
  EXPECT_NE(eagle3_config_error(c).find("'draft_vocab_size'"), std::string::npos)
      << eagle3_config_error(c);
  c = m2_eagle3_head();
  c.erase("hidden_size");
  EXPECT_NE(eagle3_config_error(c).find("'hidden_size' is required"), std::string::npos)
      << eagle3_config_error(c);
}

}  // namespace
}  // namespace minimax
