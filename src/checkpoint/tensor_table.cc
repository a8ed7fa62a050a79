// Tensor table construction, name classification and the stored layout of each quantization scheme.
#include "checkpoint/tensor_table.h"

#include <array>
#include <charconv>

#include "base/error.h"

namespace minimax {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}
bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Consumes a decimal index and the dot after it: "12.rest" -> 12, text = "rest". -1 if malformed.
int take_index(std::string_view& text) {
  size_t dot = text.find('.');
  if (dot == 0 || dot == std::string_view::npos) return -1;
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + dot, value);
  if (ec != std::errc() || end != text.data() + dot || value < 0) return -1;
  text.remove_prefix(dot + 1);
  return value;
}

// Parameter names a Linear module may carry in any of the supported layouts.
constexpr std::array<std::string_view, 8> kLinearParams = {
    "weight",      "weight_scale", "weight_scale_inv", "weight_scale_2",
    "input_scale", "output_scale", "k_scale",          "v_scale"};

// Splits "module.param" when param is a Linear parameter name.
bool split_linear_param(std::string_view name, std::string_view* module) {
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return false;
  std::string_view param = name.substr(dot + 1);
  for (std::string_view known : kLinearParams) {
    if (param == known) {
      *module = name.substr(0, dot);
      return true;
    }
  }
  return false;
}

bool one_of(std::string_view value, std::initializer_list<std::string_view> options) {
  for (std::string_view option : options)
    if (value == option) return true;
  return false;
}

// `rest` is what follows "layers.N." for a main-model layer.
TensorRole classify_layer_tensor(std::string_view rest, int layer, const ModelConfig& config) {
  bool moe = config.is_moe_layer(layer);
  bool sparse = config.is_sparse_layer(layer);
  if (rest == "input_layernorm.weight" || rest == "post_attention_layernorm.weight")
    return TensorRole::kNorm;
  if (config.use_qk_norm && one_of(rest, {"self_attn.q_norm.weight", "self_attn.k_norm.weight"}))
    return TensorRole::kQkNorm;
  if (sparse && one_of(rest, {"self_attn.index_q_norm.weight", "self_attn.index_k_norm.weight"}))
    return TensorRole::kIndexBranch;
  if (moe && rest == "block_sparse_moe.e_score_correction_bias")
    return config.use_routing_bias ? TensorRole::kRouterBias : TensorRole::kUnknown;
  std::string_view module;
  if (!split_linear_param(rest, &module)) return TensorRole::kUnknown;
  if (one_of(module,
             {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj"}))
    return TensorRole::kAttention;
  if (sparse && one_of(module, {"self_attn.index_q_proj", "self_attn.index_k_proj"}))
    return TensorRole::kIndexBranch;
  if (!moe) {
    return one_of(module, {"mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"}) ? TensorRole::kDenseFfn
                                                                             : TensorRole::kUnknown;
  }
  if (module == "block_sparse_moe.gate") return TensorRole::kRouter;
  if (config.n_shared_experts > 0 && one_of(module, {"block_sparse_moe.shared_experts.gate_proj",
                                                     "block_sparse_moe.shared_experts.up_proj",
                                                     "block_sparse_moe.shared_experts.down_proj"}))
    return TensorRole::kSharedExpert;
  constexpr std::string_view kExperts = "block_sparse_moe.experts.";
  if (!starts_with(module, kExperts)) return TensorRole::kUnknown;
  module.remove_prefix(kExperts.size());
  std::string_view projection = module;
  int expert = take_index(projection);
  if (expert < 0 || expert >= config.num_experts) return TensorRole::kUnknown;
  return one_of(projection, {"w1", "w2", "w3"}) ? TensorRole::kRoutedExpert : TensorRole::kUnknown;
}

class TableBuilder {
 public:
  explicit TableBuilder(const ModelConfig& config) : c_(config) {}

  void add(std::string name, TensorRole role, std::vector<int64_t> shape, bool linear,
           int layer = -1, int expert = -1) {
    table_.push_back({std::move(name), role, std::move(shape), layer, expert, linear});
  }
  void linear(const std::string& module, TensorRole role, int64_t out, int64_t in, int layer,
              int expert = -1) {
    add(module + ".weight", role, {out, in}, true, layer, expert);
  }

  void add_layer(int l) {
    const int64_t h = c_.hidden_size, q_width = int64_t(c_.num_heads) * c_.head_dim,
                  kv_width = int64_t(c_.num_kv_heads) * c_.head_dim;
    std::string p = c_.tensor_prefix + "layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", TensorRole::kNorm, {h}, false, l);
    linear(p + "self_attn.q_proj", TensorRole::kAttention, q_width, h, l);
    linear(p + "self_attn.k_proj", TensorRole::kAttention, kv_width, h, l);
    linear(p + "self_attn.v_proj", TensorRole::kAttention, kv_width, h, l);
    linear(p + "self_attn.o_proj", TensorRole::kAttention, h, q_width, l);
    if (c_.use_qk_norm) {
      bool per_layer = c_.qk_norm == QkNormKind::kPerLayer;
      add(p + "self_attn.q_norm.weight", TensorRole::kQkNorm, {per_layer ? q_width : c_.head_dim},
          false, l);
      add(p + "self_attn.k_norm.weight", TensorRole::kQkNorm, {per_layer ? kv_width : c_.head_dim},
          false, l);
    }
    if (c_.is_sparse_layer(l)) {
      const SparseAttentionConfig& s = c_.sparse;
      linear(p + "self_attn.index_q_proj", TensorRole::kIndexBranch,
             int64_t(s.num_index_heads) * s.index_dim, h, l);
      linear(p + "self_attn.index_k_proj", TensorRole::kIndexBranch, s.index_dim, h, l);
      add(p + "self_attn.index_q_norm.weight", TensorRole::kIndexBranch, {s.index_dim}, false, l);
      add(p + "self_attn.index_k_norm.weight", TensorRole::kIndexBranch, {s.index_dim}, false, l);
    }
    add(p + "post_attention_layernorm.weight", TensorRole::kNorm, {h}, false, l);
    if (!c_.is_moe_layer(l)) {
      ffn(p + "mlp.", TensorRole::kDenseFfn, c_.dense_intermediate_size, l);
      return;
    }
    std::string moe = p + "block_sparse_moe.";
    add(moe + "gate.weight", TensorRole::kRouter, {c_.num_experts, h}, false, l);
    if (c_.use_routing_bias)
      add(moe + "e_score_correction_bias", TensorRole::kRouterBias, {c_.num_experts}, false, l);
    for (int e = 0; e < c_.num_experts; ++e) {
      std::string expert = moe + "experts." + std::to_string(e) + ".";
      linear(expert + "w1", TensorRole::kRoutedExpert, c_.intermediate_size, h, l, e);
      linear(expert + "w3", TensorRole::kRoutedExpert, c_.intermediate_size, h, l, e);
      linear(expert + "w2", TensorRole::kRoutedExpert, h, c_.intermediate_size, l, e);
    }
    if (c_.n_shared_experts > 0)
      ffn(moe + "shared_experts.", TensorRole::kSharedExpert, c_.shared_intermediate_size, l);
  }

  std::vector<TensorSpec> build() {
    const int64_t h = c_.hidden_size;
    add(c_.tensor_prefix + "embed_tokens.weight", TensorRole::kEmbedding, {c_.vocab_size, h},
        false);
    for (int l = 0; l < c_.num_layers; ++l) add_layer(l);
    add(c_.tensor_prefix + "norm.weight", TensorRole::kFinalNorm, {h}, false);
    if (!c_.tie_word_embeddings)
      add(c_.lm_head_name, TensorRole::kLmHead, {c_.vocab_size, h}, true);
    return std::move(table_);
  }

 private:
  void ffn(const std::string& p, TensorRole role, int64_t width, int l) {
    linear(p + "gate_proj", role, width, c_.hidden_size, l);
    linear(p + "up_proj", role, width, c_.hidden_size, l);
    linear(p + "down_proj", role, c_.hidden_size, width, l);
  }

  const ModelConfig& c_;
  std::vector<TensorSpec> table_;
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::string_view tensor_role_name(TensorRole role) {
  switch (role) {
    case TensorRole::kEmbedding:
      return "embedding";
    case TensorRole::kLmHead:
      return "lm_head";
    case TensorRole::kFinalNorm:
      return "final_norm";
    case TensorRole::kNorm:
      return "norm";
    case TensorRole::kAttention:
      return "attention";
    case TensorRole::kQkNorm:
      return "qk_norm";
    case TensorRole::kRouter:
      return "router";
    case TensorRole::kRouterBias:
      return "router_bias";
    case TensorRole::kRoutedExpert:
      return "routed_expert";
    case TensorRole::kSharedExpert:
      return "shared_expert";
    case TensorRole::kDenseFfn:
      return "dense_ffn";
    case TensorRole::kIndexBranch:
      return "index_branch";
    case TensorRole::kMtp:
      return "mtp";
    case TensorRole::kVision:
      return "vision";
    case TensorRole::kRotaryInvFreq:
      return "rotary_inv_freq";
    case TensorRole::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::vector<TensorSpec> tensor_table(const ModelConfig& config) {
  return TableBuilder(config).build();
}

TensorRole classify_tensor(const std::string& hf_name, const ModelConfig& config) {
  std::string_view name = hf_name;
  // Rotary buffers some exports save (model.rotary_emb.inv_freq, ...self_attn.rotary_emb.inv_freq).
  if (ends_with(name, "rotary_emb.inv_freq")) return TensorRole::kRotaryInvFreq;
  for (std::string_view vision : {"vision_tower.", "multi_modal_projector.", "patch_merge_mlp."})
    if (starts_with(name, vision)) return TensorRole::kVision;
  // M3: language_model.model.mtp.layers.N.*; vLLM skips any name with an "mtp." component.
  if (starts_with(name, "mtp.") || name.find(".mtp.") != std::string_view::npos)
    return TensorRole::kMtp;
  if (name == config.lm_head_name)
    return config.tie_word_embeddings ? TensorRole::kUnknown : TensorRole::kLmHead;
  std::string_view lm_head_module = config.lm_head_name;
  lm_head_module.remove_suffix(std::string_view(".weight").size());
  std::string_view module;
  if (!config.tie_word_embeddings && split_linear_param(name, &module) && module == lm_head_module)
    return TensorRole::kLmHead;  // a quantized lm_head's scales
  if (!starts_with(name, config.tensor_prefix)) return TensorRole::kUnknown;
  name.remove_prefix(config.tensor_prefix.size());
  if (name == "embed_tokens.weight") return TensorRole::kEmbedding;
  if (name == "norm.weight") return TensorRole::kFinalNorm;
  if (!starts_with(name, "layers.")) return TensorRole::kUnknown;
  name.remove_prefix(std::string_view("layers.").size());
  int layer = take_index(name);
  if (layer < 0) return TensorRole::kUnknown;
  if (layer >= config.num_layers) {
    // M2 numbers its MTP modules after the main layers: model.layers.62..64 (spec §3.3).
    return layer < config.num_layers + config.num_mtp_modules ? TensorRole::kMtp
                                                              : TensorRole::kUnknown;
  }
  return classify_layer_tensor(name, layer, config);
}

bool engine_skips(TensorRole role) {
  return role == TensorRole::kMtp || role == TensorRole::kVision ||
         role == TensorRole::kRotaryInvFreq;
}

std::string module_name(const std::string& tensor_name) {
  constexpr std::string_view kWeight = ".weight";
  if (ends_with(tensor_name, kWeight))
    return tensor_name.substr(0, tensor_name.size() - kWeight.size());
  return tensor_name;
}

std::vector<StoredTensor> stored_tensors(const TensorSpec& spec, const QuantConfig& quant) {
  std::string module = module_name(spec.name);
  if (!spec.linear || !quant.is_quantized(module)) {
    bool f32 = spec.role == TensorRole::kRouter || spec.role == TensorRole::kRouterBias;
    return {{spec.name, f32 ? DType::kF32 : DType::kBF16, spec.shape}};
  }
  if (spec.shape.size() != 2)
    fail("tensor {}: a quantized Linear weight must be 2-D [out, in]", spec.name);
  const int64_t out = spec.shape[0], in = spec.shape[1];
  auto require_multiple = [&](int64_t block) {
    if (in % block != 0)
      fail("tensor {}: input width {} is not a multiple of the {} block of {}", spec.name, in,
           quant_scheme_name(quant.scheme), block);
  };
  switch (quant.scheme) {
    case QuantScheme::kNone:
      break;
    case QuantScheme::kFp8Block:
      return {{spec.name, DType::kF8_E4M3, {out, in}},
              {module + ".weight_scale_inv",
               DType::kF32,
               {ceil_div(out, quant.block_n), ceil_div(in, quant.block_k)}}};
    case QuantScheme::kFp8Channel:
      return {{spec.name, DType::kF8_E4M3, {out, in}},
              {module + ".weight_scale", DType::kF32, {out, 1}}};
    case QuantScheme::kMxfp4:
      require_multiple(32);
      return {{spec.name, DType::kU8, {out, in / 2}},
              {module + ".weight_scale", DType::kU8, {out, in / 32}}};
    case QuantScheme::kNvfp4:
      require_multiple(16);
      return {{spec.name, DType::kU8, {out, in / 2}},
              {module + ".weight_scale", DType::kF8_E4M3, {out, in / 16}},
              {module + ".weight_scale_2", DType::kF32, {}},
              {module + ".input_scale", DType::kF32, {}}};
  }
  return {{spec.name, DType::kBF16, spec.shape}};
}

}  // namespace minimax
