// The model's weights from the canonical tensor table: each entry is looked up by its id and read
// once; no tensor name is spelled here.
#include "model/model_weights.h"

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
      : config_(config),
        options_(options),
        out_(out),
        loader_(store, quant, &out.owned),
        table_(config) {}

  void load() {
    out_.embedding = loader_.matrix(table_.at({TensorKey::kEmbedding}));
    for (int l = 0; l < config_.num_layers; ++l) out_.layers.push_back(layer(l));
    out_.final_norm = loader_.vector(table_.at({TensorKey::kFinalNorm}));
    out_.lm_head = config_.tie_word_embeddings ? out_.embedding
                                               : loader_.linear(table_.at({TensorKey::kLmHead}));
    out_.mapped_bytes = loader_.mapped_bytes();
  }

 private:
  WeightView linear(TensorKey key, int l, int expert = -1) {
    return loader_.linear(table_.at({key, l, expert}));
  }
  std::vector<float> vector(TensorKey key, int l) { return loader_.vector(table_.at({key, l})); }

  FfnWeights ffn(TensorKey gate, TensorKey up, TensorKey down, int l, bool dequant) {
    FfnWeights f{linear(gate, l), linear(up, l), linear(down, l)};
    if (dequant) f = {decode(f.gate), decode(f.up), decode(f.down)};
    return f;
  }
  WeightView decode(const WeightView& w) {
    return is_quantized_format(w.format) ? loader_.decoded_bf16(w) : w;
  }

  LayerWeights layer(int l) {
    using K = TensorKey;
    LayerWeights w;
    w.sparse = config_.is_sparse_layer(l);
    w.moe = config_.is_moe_layer(l);
    w.input_norm = vector(K::kInputNorm, l);
    w.post_norm = vector(K::kPostNorm, l);
    AttentionWeights& a = w.attn;
    a.q = linear(K::kQProj, l);
    a.k = linear(K::kKProj, l);
    a.v = linear(K::kVProj, l);
    a.o = linear(K::kOProj, l);
    if (config_.use_qk_norm) {
      a.q_norm = vector(K::kQNorm, l);
      a.k_norm = vector(K::kKNorm, l);
    }
    if (w.sparse) {
      a.index_q = linear(K::kIndexQProj, l);
      a.index_k = linear(K::kIndexKProj, l);
      a.index_q_norm = vector(K::kIndexQNorm, l);
      a.index_k_norm = vector(K::kIndexKNorm, l);
    }
    if (!w.moe) {
      w.dense = ffn(K::kDenseGate, K::kDenseUp, K::kDenseDown, l, false);
      return w;
    }
    MoeWeights& moe = w.moe_weights;
    moe.router = loader_.matrix(table_.at({K::kRouter, l}));
    if (config_.use_routing_bias) moe.bias = vector(K::kRouterBias, l);
    for (int e = 0; e < config_.num_experts; ++e) {
      ExpertWeights ew{linear(K::kExpertGate, l, e), linear(K::kExpertUp, l, e),
                       linear(K::kExpertDown, l, e)};
      if (options_.dequant_experts) ew = {decode(ew.gate), decode(ew.up), decode(ew.down)};
      moe.experts.push_back(ew);
    }
    moe.has_shared = config_.n_shared_experts > 0;
    if (moe.has_shared)
      moe.shared = ffn(K::kSharedGate, K::kSharedUp, K::kSharedDown, l, options_.dequant_experts);
    return w;
  }

  const ModelConfig& config_;
  const LoadOptions& options_;
  ModelWeights& out_;
  WeightLoader loader_;
  TensorTable table_;
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
