// MiniMax-M2 / M2.1 / M2.5 / M2.7 (spec/model.md §1.1, §2, §3): everything the engine knows about
// this architecture besides the forward pass, which model/ shares with M3.
#include <array>

#include "checkpoint/arch/architecture.h"
#include "checkpoint/config_fields.h"

namespace minimax {
namespace {

// No MXFP8 release of M2 exists; ours mirrors M3's list (no vision modules).
constexpr std::array<std::string_view, 2> kM2Mxfp8Ignored = {"lm_head", "model.embed_tokens"};
// Quark's minimax_m2 template.
constexpr std::array<std::string_view, 3> kM2QuarkExclude = {"lm_head", "*block_sparse_moe.gate*",
                                                             "*self_attn*"};

// The output markers (OutputMarkers in architecture.h), as a row: think open, close; tool block
// open + suffix, close + suffix; invoke prefix; tag prefix; turns.
// clang-format off
constexpr OutputMarkers kM2Markers = {"<think>", "</think>",
    "<minimax:tool_call>", "", "</minimax:tool_call>", "",
    "<invoke name=\"", "", kMinimaxTurnMarkers};
// clang-format on

// Every field at the top level of config.json.
void parse_m2_config(const ConfigFields& top, ModelConfig& c) {
  read_common_text_fields(top, c);
  expect_string_field(top, "hidden_act", "silu", c);
  c.activation = Activation::kSilu;
  // One RMSNorm over the whole q (6144) / k (1024) projection, a weight per element.
  expect_string_field(top, "qk_norm_type", "per_layer", c);
  c.qk_norm = QkNormKind::kPerLayer;
  check_dims(top, c);

  c.use_gemma_norm = top.boolean_or("use_gemma_norm", false);
  if (c.use_gemma_norm) top.error("use_gemma_norm", "M2 uses plain RMSNorm weights, not (1 + w)");
  c.moe_layer = top.has("moe_layer_freq") ? top.layer_flags("moe_layer_freq", c.num_layers)
                                          : std::vector<int>(c.num_layers, 1);
  if (top.has("attn_type_list")) {
    // 0 meant MiniMax-01's lightning attention; M2 has softmax attention in every layer.
    std::vector<int> attn = top.layer_flags("attn_type_list", c.num_layers);
    for (int layer = 0; layer < c.num_layers; ++layer)
      if (attn[layer] != 1)
        top.error("attn_type_list",
                  fmt::format("layer {} asks for linear attention (0), not supported", layer));
  }
  c.n_shared_experts = top.integer_or("n_shared_experts", 0);
  c.dense_intermediate_size = top.integer_or("dense_intermediate_size", 0);
  if (top.has("sparse_attention_config")) {
    ConfigFields s(top.object("sparse_attention_config"), "sparse_attention_config.", top.source());
    if (s.boolean_or("use_sparse_attention", false))
      s.error("use_sparse_attention", "M2 has no sparse attention (an M3 field)");
  }
  read_sparse_attention(top, c);
  check_consistency(top, c);
}

}  // namespace

const ArchitectureRecord& minimax_m2_record() {
  static const ArchitectureRecord record{
      .arch = Arch::kM2,
      .name = "M2",
      .architecture = "MiniMaxM2ForCausalLM",
      .model_type = "minimax_m2",
      .description = "MiniMax-M2 / M2.1 / M2.5 / M2.7: cross-head QK norm, SiLU experts",
      .parse_config = parse_m2_config,
      .tensor_prefix = "model.",
      .lm_head_name = "lm_head.weight",
      .tensor_name = minimax_tensor_name,
      .parse_tensor_name = parse_minimax_tensor_name,
      .layer_of_name = minimax_layer_of_name,
      .vision_modules = {},
      .quark_exclude = kM2QuarkExclude,
      .mxfp8_ignored_layers = kM2Mxfp8Ignored,
      .reasoning_parser = "minimax_m2",
      .tool_call_parser = "minimax_m2",
      .chat_template = "minimax_m2",
      .markers = kM2Markers,
  };
  return record;
}

}  // namespace minimax
