// The model's weights from the canonical tensor table: each table entry is read once, by name.
#include "model/model_weights.h"

#include <map>

#include "base/error.h"
#include "base/log.h"
#include "checkpoint/tensor_table.h"
#include "model/weight_loader.h"

namespace minimax {

namespace {

class ModelLoader {
 public:
  ModelLoader(const TensorStore& store, const ModelConfig& config, const QuantConfig& quant,
              const LoadOptions& options, ModelWeights& out)
      : config_(config), options_(options), out_(out), loader_(store, quant, &out.owned) {
    for (TensorSpec& spec : tensor_table(config)) table_.emplace(spec.name, std::move(spec));
  }

  void load() {
    const std::string& p = config_.tensor_prefix;
    out_.embedding = loader_.matrix(spec(p + "embed_tokens.weight"));
    for (int l = 0; l < config_.num_layers; ++l) out_.layers.push_back(layer(l));
    out_.final_norm = loader_.vector(spec(p + "norm.weight"));
    out_.lm_head =
        config_.tie_word_embeddings ? out_.embedding : loader_.linear(spec(config_.lm_head_name));
    out_.mapped_bytes = loader_.mapped_bytes();
  }

 private:
  // Every name the loader reads must be a table entry: the table is the one list of tensors.
  const TensorSpec& spec(const std::string& name) const {
    auto it = table_.find(name);
    if (it == table_.end()) fail("loader: '{}' is not in the tensor table of this config", name);
    return it->second;
  }
  WeightView linear(const std::string& name) { return loader_.linear(spec(name)); }
  std::vector<float> vector(const std::string& name) { return loader_.vector(spec(name)); }

  FfnWeights ffn(const std::string& p, bool dequant) {
    FfnWeights f{linear(p + "gate_proj.weight"), linear(p + "up_proj.weight"),
                 linear(p + "down_proj.weight")};
    if (dequant) f = {decode(f.gate), decode(f.up), decode(f.down)};
    return f;
  }
  WeightView decode(const WeightView& w) {
    return is_quantized_format(w.format) ? loader_.decoded_bf16(w) : w;
  }

  LayerWeights layer(int l) {
    const std::string p = config_.tensor_prefix + "layers." + std::to_string(l) + ".";
    LayerWeights w;
    w.sparse = config_.is_sparse_layer(l);
    w.moe = config_.is_moe_layer(l);
    w.input_norm = vector(p + "input_layernorm.weight");
    w.post_norm = vector(p + "post_attention_layernorm.weight");
    AttentionWeights& a = w.attn;
    a.q = linear(p + "self_attn.q_proj.weight");
    a.k = linear(p + "self_attn.k_proj.weight");
    a.v = linear(p + "self_attn.v_proj.weight");
    a.o = linear(p + "self_attn.o_proj.weight");
    if (config_.use_qk_norm) {
      a.q_norm = vector(p + "self_attn.q_norm.weight");
      a.k_norm = vector(p + "self_attn.k_norm.weight");
    }
    if (w.sparse) {
      a.index_q = linear(p + "self_attn.index_q_proj.weight");
      a.index_k = linear(p + "self_attn.index_k_proj.weight");
      a.index_q_norm = vector(p + "self_attn.index_q_norm.weight");
      a.index_k_norm = vector(p + "self_attn.index_k_norm.weight");
    }
    if (!w.moe) {
      w.dense = ffn(p + "mlp.", false);
      return w;
    }
    const std::string m = p + "block_sparse_moe.";
    MoeWeights& moe = w.moe_weights;
    moe.router = loader_.matrix(spec(m + "gate.weight"));
    if (config_.use_routing_bias) moe.bias = vector(m + "e_score_correction_bias");
    for (int e = 0; e < config_.num_experts; ++e) {
      const std::string x = m + "experts." + std::to_string(e) + ".";
      ExpertWeights ew{linear(x + "w1.weight"), linear(x + "w3.weight"), linear(x + "w2.weight")};
      if (options_.dequant_experts) ew = {decode(ew.gate), decode(ew.up), decode(ew.down)};
      moe.experts.push_back(ew);
    }
    moe.has_shared = config_.n_shared_experts > 0;
    if (moe.has_shared) moe.shared = ffn(m + "shared_experts.", options_.dequant_experts);
    return w;
  }

  const ModelConfig& config_;
  const LoadOptions& options_;
  ModelWeights& out_;
  WeightLoader loader_;
  std::map<std::string, TensorSpec> table_;
};

// Names in the checkpoint that the table does not know and the engine does not skip on purpose:
// reported, not fatal (releases carry extras such as KV-cache scales).
void report_unused(const TensorStore& store, const ModelConfig& config) {
  size_t unknown = 0;
  std::string first;
  for (const std::string& name : store.names()) {
    if (classify_tensor(name, config) != TensorRole::kUnknown) continue;
    if (unknown++ == 0) first = name;
  }
  if (unknown > 0)
    log_warn("{}: {} tensor(s) not used by the model, e.g. '{}'", store.dir(), unknown, first);
}

}  // namespace

ModelWeights load_model_weights(const TensorStore& store, const ModelConfig& config,
                                const QuantConfig& quant, const LoadOptions& options) {
  ModelWeights out;
  out.scheme = quant.scheme;
  out.dequant_experts = options.dequant_experts;
  ModelLoader(store, config, quant, options, out).load();
  report_unused(store, config);
  return out;
}

}  // namespace minimax
