// MiniMax-M3 text backbone (spec/model.md §1.2, §5): everything the engine knows about this
// architecture besides the forward pass, which model/ shares with M2.
#include <array>

#include "checkpoint/arch/architecture.h"
#include "checkpoint/config_fields.h"

namespace minimax {
namespace {

constexpr std::array<std::string_view, 3> kVisionModules = {"vision_tower", "multi_modal_projector",
                                                            "patch_merge_mlp"};
// The amd/MiniMax-M3-MXFP4 recipe: the dense layers' MLPs stay unquantized, shared experts are
// MXFP4.
constexpr std::array<std::string_view, 9> kM3QuarkExclude = {
    "*lm_head",          "*vision_tower*",         "*multi_modal_projector*",
    "*patch_merge_mlp*", "*block_sparse_moe.gate", "*self_attn*",
    "*mlp.gate_proj",    "*mlp.up_proj",           "*mlp.down_proj"};

// MiniMaxAI/MiniMax-M3-MXFP8's ignored_layers (docs/checkpoint.md). vLLM matches them as ModelOpt
// exclude_modules (substrings too), so "lm_head" reaches language_model.lm_head; the router gate
// is a plain Linear in every loader and stays F32 without being listed.
constexpr std::array<std::string_view, 3> kM3Mxfp8Ignored = {"lm_head", "model.embed_tokens",
                                                             "vision_tower"};

// The output markers (OutputMarkers in architecture.h), as a row: think open, close; tool block
// open + suffix, close + suffix; invoke prefix; tag prefix; turns.
// clang-format off
constexpr OutputMarkers kM3Markers = {"<mm:think>", "</mm:think>",
    "]<]minimax[>[", "<tool_call>", "]<]minimax[>[", "</tool_call>",
    "]<]minimax[>[<invoke name=\"", "]<]minimax[>[", kMinimaxTurnMarkers};
// clang-format on

// A vision-language checkpoint: the language model's fields sit under text_config; a few
// (tie_word_embeddings, token ids) may also appear at the top level.
void parse_m3_config(const ConfigFields& top, ModelConfig& c) {
  c.tie_word_embeddings = top.boolean_or("tie_word_embeddings", false);
  c.bos_token_id = top.token_id_or("bos_token_id", -1);
  c.eos_token_id = top.token_id_or("eos_token_id", -1);
  ConfigFields text(top.object("text_config"), "text_config.", top.source());
  read_common_text_fields(text, c);
  expect_string_field(text, "hidden_act", "swigluoai", c);
  c.activation = Activation::kSwigluOai;
  // Each 128-wide head normalised with one shared [head_dim] weight.
  expect_string_field(text, "qk_norm_type", "per_head", c);
  c.qk_norm = QkNormKind::kPerHead;
  check_dims(text, c);

  c.use_gemma_norm = text.boolean_or("use_gemma_norm", true);
  c.moe_layer = text.layer_flags("moe_layer_freq", c.num_layers);
  c.n_shared_experts = text.integer_or("n_shared_experts", 0);
  c.dense_intermediate_size = text.integer_or("dense_intermediate_size", 0);
  c.swiglu_alpha = text.number_or("swiglu_alpha", 1.702);
  c.swiglu_limit = text.number_or("swiglu_limit", 7.0);
  // Absent in the release config; the OAI form's up-branch offset is 1 (vLLM PR #45738).
  c.swiglu_beta = text.number_or("swiglu_beta", 1.0);
  if (!(c.swiglu_limit > 0)) text.error("swiglu_limit", "must be positive");
  read_sparse_attention(text, c);
  check_consistency(text, c);
}

}  // namespace

const ArchitectureRecord& minimax_m3_record() {
  static const ArchitectureRecord record{
      .arch = Arch::kM3,
      .name = "M3",
      .architecture = "MiniMaxM3SparseForConditionalGeneration",
      .model_type = "minimax_m3_vl",
      .description =
          "MiniMax-M3 text backbone: Gemma norms, MSA sparse attention, SwiGLU-OAI, shared expert",
      .parse_config = parse_m3_config,
      .tensor_prefix = "language_model.model.",
      .lm_head_name = "language_model.lm_head.weight",
      .tensor_name = minimax_tensor_name,
      .parse_tensor_name = parse_minimax_tensor_name,
      .layer_of_name = minimax_layer_of_name,
      .vision_modules = kVisionModules,
      .quark_exclude = kM3QuarkExclude,
      .mxfp8_ignored_layers = kM3Mxfp8Ignored,
      .reasoning_parser = "minimax_m3",
      .tool_call_parser = "minimax_m3",
      .chat_template = "minimax_m3",
      .markers = kM3Markers,
  };
  return record;
}

}  // namespace minimax
