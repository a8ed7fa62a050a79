// Tiny M2 / M3 configs with the real field set (values of the real releases where size allows).
#include "checkpoint/tiny_config.h"

#include <vector>

#include "base/error.h"
#include "checkpoint/arch/architecture.h"

namespace minimax {
namespace {

using nlohmann::json;

// The dimensions that differ between the M2-architecture shapes.
struct M2Dims {
  int layers, hidden, expert_width, heads, kv_heads, head_dim, rotary_dim, experts, top_k;
  int max_positions = 8192;
};
constexpr M2Dims kTinyM2 = {3, 64, 32, 8, 2, 16, 8, 16, 4};
// Long enough for `bench --depth 32768` (the release allows 196608).
constexpr M2Dims kBenchM2 = {10, 1536, 768, 24, 4, 128, 64, 64, 8, 196608};
// The tiny M2 widened so that every split width at 2 ranks is a multiple of 128 (parallel tests).
constexpr M2Dims kParallelM2 = {3, 128, 256, 8, 2, 16, 8, 16, 4};

// The M3 dimensions that differ between the tiny, parallel and benchmark shapes.
struct M3Widths {
  int hidden, expert, dense, shared;
  int dense_layers = 3, sparse_layers = 2;  // dense FFN + attention first, then MoE + MSA
  int heads = 8, kv_heads = 2, head_dim = 16, rotary_dim = 8;
  int experts = 16, top_k = 4;
  int index_dim = 16, index_heads = 2, topk_blocks = 4, block_size = 16;
  int max_positions = 8192;
};
constexpr M3Widths kTinyM3 = {64, 32, 128, 32};
constexpr M3Widths kParallelM3 = {128, 256, 256, 256};
// The M3 CPU benchmark shape: the release's attention geometry (4 KV and index heads of 128, MSA
// blocks of 128, top-16, local block forced), widths of the M2 benchmark shape, and roughly the
// release's share of dense-attention layers (3 of 60 there; 1 of 12 here: 3 of 12 would give
// dense attention 5 times the release's share of a long-context decode).
constexpr M3Widths kBenchM3 = {1536, 768, 3072, 768, 1, 11, 16,  4,     128,
                               64,   64,  4,    128, 4, 16, 128, 196608};

json m2_config(const M2Dims& d, int vocab_size) {
  const int layers = d.layers;
  // Field set of MiniMaxAI/MiniMax-M2.x config.json (spec/model.md §1.1), dims shrunk.
  return {
      {"architectures", {minimax_m2_record().architecture}},
      {"attn_type_list", std::vector<int>(layers, 1)},
      {"auto_map",
       {{"AutoConfig", "configuration_minimax_m2.MiniMaxM2Config"},
        {"AutoModelForCausalLM", "modeling_minimax_m2.MiniMaxM2ForCausalLM"}}},
      {"head_dim", d.head_dim},
      {"hidden_act", "silu"},
      {"hidden_size", d.hidden},
      {"intermediate_size", d.expert_width},
      {"max_position_embeddings", d.max_positions},
      {"model_type", minimax_m2_record().model_type},
      {"mtp_transformer_layers", 1},
      {"num_attention_heads", d.heads},
      {"num_experts_per_tok", d.top_k},
      {"num_hidden_layers", layers},
      {"num_key_value_heads", d.kv_heads},
      {"num_local_experts", d.experts},
      {"num_mtp_modules", 3},
      {"qk_norm_type", "per_layer"},
      {"rms_norm_eps", 1e-06},
      {"rope_theta", 5000000},
      {"rotary_dim", d.rotary_dim},
      {"scoring_func", "sigmoid"},
      {"shared_intermediate_size", 0},
      {"tie_word_embeddings", false},
      {"transformers_version", "4.46.1"},
      {"use_cache", true},
      {"use_mtp", true},
      {"use_qk_norm", true},
      {"use_routing_bias", true},
      {"vocab_size", vocab_size},
      {"torch_dtype", "bfloat16"},
  };
}

json tiny_m3(int vocab_size, const M3Widths& w = kTinyM3) {
  std::vector<int> per_layer(w.dense_layers, 0);  // dense layers first, then MoE + sparse
  per_layer.resize(w.dense_layers + w.sparse_layers, 1);
  const int hidden = w.hidden;
  // text_config / sparse_attention_config field set of MiniMax-M3 (spec/model.md §1.2).
  json sparse = {
      {"use_sparse_attention", true},
      {"sparse_index_dim", w.index_dim},
      {"sparse_num_index_heads", w.index_heads},
      {"sparse_topk_blocks", w.topk_blocks},
      {"sparse_block_size", w.block_size},
      {"sparse_disable_index_value", per_layer},
      {"sparse_score_type", "max"},
      {"sparse_init_block", 0},
      {"sparse_local_block", 1},
      {"sparse_attention_freq", per_layer},
  };
  json text = {
      {"architectures", {"MiniMaxM3SparseForCausalLM"}},
      {"hidden_size", hidden},
      {"intermediate_size", w.expert},
      {"dense_intermediate_size", w.dense},
      {"shared_intermediate_size", w.shared},
      {"num_hidden_layers", int(per_layer.size())},
      {"num_attention_heads", w.heads},
      {"num_key_value_heads", w.kv_heads},
      {"head_dim", w.head_dim},
      {"vocab_size", vocab_size},
      {"max_position_embeddings", w.max_positions},
      {"rms_norm_eps", 1e-06},
      {"use_gemma_norm", true},
      {"attention_output_gate", false},
      {"rope_theta", 5000000},
      {"rotary_dim", w.rotary_dim},
      {"partial_rotary_factor", 0.5},
      {"hidden_act", "swigluoai"},
      {"use_qk_norm", true},
      {"qk_norm_type", "per_head"},
      {"tie_word_embeddings", false},
      {"num_local_experts", w.experts},
      {"num_experts_per_tok", w.top_k},
      {"n_shared_experts", 1},
      {"scoring_func", "sigmoid"},
      {"use_routing_bias", true},
      {"moe_layer_freq", per_layer},
      {"num_mtp_modules", 7},
      {"num_nextn_predict_layers", 1},
      {"swiglu_alpha", 1.702},
      {"swiglu_beta", 1.0},
      {"swiglu_limit", 7.0},
      {"routed_scaling_factor", 2.0},
      {"sparse_attention_config", sparse},
  };
  json vision = {
      {"model_type", "clip_vision_model"},
      {"hidden_size", 32},
      {"num_attention_heads", 2},
      {"num_hidden_layers", 2},
      {"intermediate_size", 64},
      {"patch_size", 14},
      {"image_size", 224},
      {"projection_dim", hidden},
      {"position_embedding_type", "rope"},
      {"rope_mode", "3d"},
      {"rope_theta", 10000.0},
      {"attention_dropout", 0.0},
      {"hidden_act", "gelu"},
      {"initializer_factor", 1.0},
      {"initializer_range", 0.02},
      {"layer_norm_eps", 1e-05},
      {"num_channels", 3},
      {"vocab_size", 32000},
      {"vision_segment_max_frames", 4},
      {"spatial_merge_size", 2},
      {"temporal_patch_size", 2},
      {"image_token_compression_method", "patch_merge"},
  };
  // The real top level also has image_token_index / video_token_index (200025 / 200026): ids of
  // the real vocabulary, left out here because the tiny vocabulary is the caller's.
  return {
      {"architectures", {minimax_m3_record().architecture}},
      {"auto_map", {{"AutoConfig", "configuration_minimax_m3_vl.MiniMaxM3VLConfig"}}},
      {"model_type", minimax_m3_record().model_type},
      {"torch_dtype", "bfloat16"},
      {"transformers_version", "4.52.4"},
      {"tie_word_embeddings", false},
      {"image_seq_length", 576},
      {"multimodal_projector_bias", true},
      {"num_reward_heads", 0},
      {"process_image_mode", "dynamic_res"},
      {"projector_hidden_act", "gelu"},
      {"projector_hidden_size", hidden},
      {"vision_feature_layer", -1},
      {"vision_feature_select_strategy", "full"},
      {"image_grid_pinpoints", {{224, 224}, {224, 448}, {448, 224}, {448, 448}}},
      {"image_token_compression_method", "patch_merge"},
      {"spatial_merge_size", 2},
      {"temporal_patch_size", 2},
      {"text_config", text},
      {"vision_config", vision},
  };
}

}  // namespace

nlohmann::json tiny_config_json(Arch arch, int vocab_size) {
  if (vocab_size <= 0) fail("tiny_config_json: vocab_size must be positive, got {}", vocab_size);
  return arch == Arch::kM2 ? m2_config(kTinyM2, vocab_size) : tiny_m3(vocab_size);
}

nlohmann::json parallel_config_json(Arch arch, int vocab_size) {
  if (vocab_size <= 0)
    fail("parallel_config_json: vocab_size must be positive, got {}", vocab_size);
  return arch == Arch::kM2 ? m2_config(kParallelM2, vocab_size) : tiny_m3(vocab_size, kParallelM3);
}

nlohmann::json bench_config_json(int vocab_size, Arch arch) {
  if (vocab_size <= 0) fail("bench_config_json: vocab_size must be positive, got {}", vocab_size);
  return arch == Arch::kM2 ? m2_config(kBenchM2, vocab_size) : tiny_m3(vocab_size, kBenchM3);
}

}  // namespace minimax
