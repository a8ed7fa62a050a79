// Model loading and the forward pass: embedding, the layer loop (pre-norm residual blocks), the
// final norm and lm_head.
#include "model/model.h"

#include "base/error.h"
#include "base/log.h"
#include "model/layer_blocks.h"
#include "model/model_registry.h"

namespace minimax {

std::string_view moe_path_name(MoePath path) {
  switch (path) {
    case MoePath::kFast:
      return "fast";
    case MoePath::kDequant:
      return "dequant";
  }
  return "unknown";
}

MoePath parse_moe_path(std::string_view text, std::string_view what) {
  if (text == "fast") return MoePath::kFast;
  if (text == "dequant") return MoePath::kDequant;
  fail("{}: unknown MoE path '{}' (expected fast or dequant)", what, text);
}

std::unique_ptr<Model> Model::load(const std::string& dir, const ModelOptions& options,
                                   const Communicator* comm) {
  ModelConfig config = load_model_config(dir);
  const ArchitectureEntry& entry = find_architecture(config.architecture, dir + "/config.json");
  if (entry.arch != config.arch)
    fail("{}/config.json: architecture '{}' is registered as {} but parsed as {}", dir,
         config.architecture, arch_name(entry.arch), arch_name(config.arch));
  QuantConfig quant = load_quant_config(dir);
  auto store = std::make_unique<TensorStore>(dir);
  return entry.create(std::move(config), std::move(quant), std::move(store), options, comm);
}

Model::Model(ModelConfig config, QuantConfig quant, std::unique_ptr<TensorStore> store,
             const ModelOptions& options, const Communicator* comm)
    : config_(std::move(config)),
      quant_(std::move(quant)),
      store_(std::move(store)),
      options_(options),
      comm_(comm),
      ops_(options.kernels != nullptr ? complete_with_reference(*options.kernels)
                                      : kernel_ops(options.backend)) {
  if (comm_ != nullptr && comm_->size() > 1)
    fail("model: {} processes given, but sharded (TP/EP/DP) execution is not implemented yet",
         comm_->size());
  pool_ = options_.pool;
  if (pool_ == nullptr) {
    own_pool_ = std::make_unique<ThreadPool>(options_.threads);
    pool_ = own_pool_.get();
  }
  act_quant_ = plan_activation_quant(config_, quant_, options_.emulate_activation_quant);
  LoadOptions load;
  load.dequant_experts = options_.moe_path == MoePath::kDequant;
  weights_ = load_model_weights(*store_, config_, quant_, load);
  options_.pool = pool_;
  log_info("{}: {} {} model, {} layers, kernels '{}', MoE path {}", store_->dir(),
           config_.architecture, quant_scheme_name(quant_.scheme), config_.num_layers, ops_.name,
           moe_path_name(options_.moe_path));
}

Model::~Model() = default;

std::vector<float> Model::forward(std::span<const int32_t> tokens,
                                  std::span<const int32_t> positions, KvCache& cache,
                                  LogitsFor which) {
  const int64_t T = static_cast<int64_t>(tokens.size());
  if (T == 0) fail("forward: no tokens");
  if (positions.size() != tokens.size())
    fail("forward: {} tokens but {} positions", tokens.size(), positions.size());
  for (int32_t p : positions) cache.check_position(p);
  cache.mark_filled(positions.data(), T);
  for (int64_t t = 0; t < T; ++t)
    if (positions[t] >= cache.length())
      fail("forward: token {} at position {} would attend slot {}, which holds no token", t,
           positions[t], cache.length());

  const ForwardContext ctx{config_,
                           ops_,
                           pool_,
                           act_quant_,
                           options_.dense_attention,
                           options_.moe_path == MoePath::kDequant,
                           positions.data(),
                           T};
  const int64_t H = config_.hidden_size;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  const bool gemma = config_.use_gemma_norm;
  std::vector<float> h(T * H), xn(T * H), delta(T * H);
  ops_.embedding(weights_.embedding, tokens.data(), T, h.data());
  for (int l = 0; l < config_.num_layers; ++l) {
    const LayerWeights& w = weights_.layers[l];
    ops_.rms_norm(h.data(), T, H, w.input_norm.data(), eps, gemma, xn.data(), pool_);
    attention_block(ctx, w, l, xn.data(), cache, delta.data());
    for (int64_t i = 0; i < T * H; ++i) h[i] += delta[i];
    ops_.rms_norm(h.data(), T, H, w.post_norm.data(), eps, gemma, xn.data(), pool_);
    ffn_block(ctx, w, xn.data(), delta.data());
    for (int64_t i = 0; i < T * H; ++i) h[i] += delta[i];
  }
  const int64_t first = which == LogitsFor::kLastToken ? T - 1 : 0, rows = T - first;
  ops_.rms_norm(h.data() + first * H, rows, H, weights_.final_norm.data(), eps, gemma, xn.data(),
                pool_);
  std::vector<float> logits(rows * weights_.lm_head.rows);
  ops_.linear(weights_.lm_head, xn.data(), rows, logits.data(), pool_);
  return logits;
}

}  // namespace minimax
