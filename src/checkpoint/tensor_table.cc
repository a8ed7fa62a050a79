// Tensor table construction, name classification and the stored layout of each quantization scheme.
#include "checkpoint/tensor_table.h"

#include <array>

#include "base/error.h"
#include "checkpoint/arch/architecture.h"

namespace minimax {
namespace {

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

// Keys whose weight is a matrix that may carry quantization side tensors.
bool is_matrix_key(TensorKey key) {
  switch (key) {
    case TensorKey::kEmbedding:
    case TensorKey::kFinalNorm:
    case TensorKey::kInputNorm:
    case TensorKey::kPostNorm:
    case TensorKey::kQNorm:
    case TensorKey::kKNorm:
    case TensorKey::kIndexQNorm:
    case TensorKey::kIndexKNorm:
    case TensorKey::kRouterBias:
      return false;
    case TensorKey::kLmHead:
    case TensorKey::kQProj:
    case TensorKey::kKProj:
    case TensorKey::kVProj:
    case TensorKey::kOProj:
    case TensorKey::kIndexQProj:
    case TensorKey::kIndexKProj:
    case TensorKey::kRouter:
    case TensorKey::kExpertGate:
    case TensorKey::kExpertUp:
    case TensorKey::kExpertDown:
    case TensorKey::kSharedGate:
    case TensorKey::kSharedUp:
    case TensorKey::kSharedDown:
    case TensorKey::kDenseGate:
    case TensorKey::kDenseUp:
    case TensorKey::kDenseDown:
      return true;
  }
  return false;
}

// What a parallel mode does with each weight (docs/checkpoint.md, "Split rules"). Under the
// tensor-parallel attention modes heads are divided: q/k/v by output rows, o_proj by input
// columns (partial sums, all-reduced); under DP_EP each rank runs whole requests, so attention is
// replicated.
constexpr SplitRules kTpRows = {Split::kRows, Split::kRows, Split::kReplicated};
constexpr SplitRules kTpCols = {Split::kCols, Split::kCols, Split::kReplicated};
constexpr SplitRules kReplicated = {Split::kReplicated, Split::kReplicated, Split::kReplicated};

class TableBuilder {
 public:
  explicit TableBuilder(const ModelConfig& config)
      : c_(config), record_(config.architecture_record()) {}

  std::vector<TensorSpec> build() {
    const int64_t h = c_.hidden_size;
    add({TensorKey::kEmbedding}, {c_.vocab_size, h}, false);
    for (int l = 0; l < c_.num_layers; ++l) add_layer(l);
    add({TensorKey::kFinalNorm}, {h}, false);
    add({TensorKey::kLmHead}, {c_.vocab_size, h}, true);
    return std::move(table_);
  }

 private:
  // Adds `id` when the config has it.
  void add(const TensorId& id, std::vector<int64_t> shape, bool linear) {
    if (!config_has_tensor(id, c_)) return;
    table_.push_back({record_.tensor_name(record_, id), tensor_key_role(id.key), std::move(shape),
                      id.layer, id.expert, linear, id, tensor_split_rules(id.key, c_)});
  }

  void add_layer(int l) {
    using K = TensorKey;
    const int64_t h = c_.hidden_size, q_width = int64_t(c_.num_heads) * c_.head_dim,
                  kv_width = int64_t(c_.num_kv_heads) * c_.head_dim;
    const bool per_layer = c_.qk_norm == QkNormKind::kPerLayer;
    const SparseAttentionConfig& s = c_.sparse;
    add({K::kInputNorm, l}, {h}, false);
    add({K::kQProj, l}, {q_width, h}, true);
    add({K::kKProj, l}, {kv_width, h}, true);
    add({K::kVProj, l}, {kv_width, h}, true);
    add({K::kOProj, l}, {h, q_width}, true);
    add({K::kQNorm, l}, {per_layer ? q_width : c_.head_dim}, false);
    add({K::kKNorm, l}, {per_layer ? kv_width : c_.head_dim}, false);
    add({K::kIndexQProj, l}, {int64_t(s.num_index_heads) * s.index_dim, h}, true);
    add({K::kIndexKProj, l}, {s.index_dim, h}, true);
    add({K::kIndexQNorm, l}, {s.index_dim}, false);
    add({K::kIndexKNorm, l}, {s.index_dim}, false);
    add({K::kPostNorm, l}, {h}, false);
    add({K::kDenseGate, l}, {c_.dense_intermediate_size, h}, true);
    add({K::kDenseUp, l}, {c_.dense_intermediate_size, h}, true);
    add({K::kDenseDown, l}, {h, c_.dense_intermediate_size}, true);
    add({K::kRouter, l}, {c_.num_experts, h}, false);
    add({K::kRouterBias, l}, {c_.num_experts}, false);
    if (c_.is_moe_layer(l)) {
      for (int e = 0; e < c_.num_experts; ++e) {
        add({K::kExpertGate, l, e}, {c_.intermediate_size, h}, true);
        add({K::kExpertUp, l, e}, {c_.intermediate_size, h}, true);
        add({K::kExpertDown, l, e}, {h, c_.intermediate_size}, true);
      }
    }
    add({K::kSharedGate, l}, {c_.shared_intermediate_size, h}, true);
    add({K::kSharedUp, l}, {c_.shared_intermediate_size, h}, true);
    add({K::kSharedDown, l}, {h, c_.shared_intermediate_size}, true);
  }

  const ModelConfig& c_;
  const ArchitectureRecord& record_;
  std::vector<TensorSpec> table_;
};

uint64_t index_key(const TensorId& id) {
  return (uint64_t(id.key) << 56) | (uint64_t(uint32_t(id.layer + 1)) << 28) |
         uint64_t(uint32_t(id.expert + 1));
}

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

TensorRole tensor_key_role(TensorKey key) {
  switch (key) {
    case TensorKey::kEmbedding:
      return TensorRole::kEmbedding;
    case TensorKey::kFinalNorm:
      return TensorRole::kFinalNorm;
    case TensorKey::kLmHead:
      return TensorRole::kLmHead;
    case TensorKey::kInputNorm:
    case TensorKey::kPostNorm:
      return TensorRole::kNorm;
    case TensorKey::kQProj:
    case TensorKey::kKProj:
    case TensorKey::kVProj:
    case TensorKey::kOProj:
      return TensorRole::kAttention;
    case TensorKey::kQNorm:
    case TensorKey::kKNorm:
      return TensorRole::kQkNorm;
    case TensorKey::kIndexQProj:
    case TensorKey::kIndexKProj:
    case TensorKey::kIndexQNorm:
    case TensorKey::kIndexKNorm:
      return TensorRole::kIndexBranch;
    case TensorKey::kRouter:
      return TensorRole::kRouter;
    case TensorKey::kRouterBias:
      return TensorRole::kRouterBias;
    case TensorKey::kExpertGate:
    case TensorKey::kExpertUp:
    case TensorKey::kExpertDown:
      return TensorRole::kRoutedExpert;
    case TensorKey::kSharedGate:
    case TensorKey::kSharedUp:
    case TensorKey::kSharedDown:
      return TensorRole::kSharedExpert;
    case TensorKey::kDenseGate:
    case TensorKey::kDenseUp:
    case TensorKey::kDenseDown:
      return TensorRole::kDenseFfn;
  }
  return TensorRole::kUnknown;
}

bool config_has_tensor(const TensorId& id, const ModelConfig& c) {
  if (!key_has_layer(id.key)) {
    if (id.layer != -1 || id.expert != -1) return false;
    return id.key != TensorKey::kLmHead || !c.tie_word_embeddings;
  }
  if (id.layer < 0 || id.layer >= c.num_layers) return false;
  if (key_has_expert(id.key) != (id.expert >= 0)) return false;
  const bool moe = c.is_moe_layer(id.layer);
  switch (id.key) {
    case TensorKey::kInputNorm:
    case TensorKey::kPostNorm:
    case TensorKey::kQProj:
    case TensorKey::kKProj:
    case TensorKey::kVProj:
    case TensorKey::kOProj:
      return true;
    case TensorKey::kQNorm:
    case TensorKey::kKNorm:
      return c.use_qk_norm;
    case TensorKey::kIndexQProj:
    case TensorKey::kIndexKProj:
    case TensorKey::kIndexQNorm:
    case TensorKey::kIndexKNorm:
      return c.is_sparse_layer(id.layer);
    case TensorKey::kRouter:
      return moe;
    case TensorKey::kRouterBias:
      return moe && c.use_routing_bias;
    case TensorKey::kExpertGate:
    case TensorKey::kExpertUp:
    case TensorKey::kExpertDown:
      return moe && id.expert < c.num_experts;
    case TensorKey::kSharedGate:
    case TensorKey::kSharedUp:
    case TensorKey::kSharedDown:
      return moe && c.n_shared_experts > 0;
    case TensorKey::kDenseGate:
    case TensorKey::kDenseUp:
    case TensorKey::kDenseDown:
      return !moe;
    case TensorKey::kEmbedding:
    case TensorKey::kFinalNorm:
    case TensorKey::kLmHead:
      break;
  }
  return false;
}

SplitRules tensor_split_rules(TensorKey key, const ModelConfig& c) {
  switch (key) {
    case TensorKey::kQProj:
    case TensorKey::kKProj:
    case TensorKey::kVProj:
      return kTpRows;
    case TensorKey::kOProj:
      return kTpCols;
    case TensorKey::kQNorm:
    case TensorKey::kKNorm:
      // M2's weight has one entry per element of the whole projection, so it is divided with the
      // heads (and the sum of squares all-reduced); M3's [head_dim] weight serves every head.
      return c.qk_norm == QkNormKind::kPerLayer ? kTpRows : kReplicated;
    case TensorKey::kExpertGate:
    case TensorKey::kExpertUp:
      return {Split::kRows, Split::kExpert, Split::kExpert};
    case TensorKey::kExpertDown:
      return {Split::kCols, Split::kExpert, Split::kExpert};
    case TensorKey::kSharedGate:
    case TensorKey::kSharedUp:
    case TensorKey::kDenseGate:
    case TensorKey::kDenseUp:
      return kTpRows;
    case TensorKey::kSharedDown:
    case TensorKey::kDenseDown:
      return kTpCols;
    case TensorKey::kLmHead:
      // By vocabulary rows; each rank's logits are all-gathered.
      return kTpRows;
    case TensorKey::kEmbedding:
    case TensorKey::kFinalNorm:
    case TensorKey::kInputNorm:
    case TensorKey::kPostNorm:
    case TensorKey::kIndexQProj:
    case TensorKey::kIndexKProj:
    case TensorKey::kIndexQNorm:
    case TensorKey::kIndexKNorm:
    case TensorKey::kRouter:
    case TensorKey::kRouterBias:
      // The index branch is replicated: its key is a single head shared by every index-query
      // head, and block selection must come out the same on every rank of a group.
      return kReplicated;
  }
  return kReplicated;
}

std::vector<TensorSpec> tensor_table(const ModelConfig& config) {
  return TableBuilder(config).build();
}

TensorTable::TensorTable(const ModelConfig& config) : entries_(tensor_table(config)) {
  index_.reserve(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) index_.emplace(index_key(entries_[i].id), i);
}

const TensorSpec* TensorTable::find(const TensorId& id) const {
  auto it = index_.find(index_key(id));
  return it == index_.end() ? nullptr : &entries_[it->second];
}

const TensorSpec& TensorTable::at(const TensorId& id) const {
  if (const TensorSpec* spec = find(id)) return *spec;
  fail("tensor table: no {} weight (layer {}, expert {}) in this config", tensor_key_name(id.key),
       id.layer, id.expert);
}

std::optional<TensorId> tensor_id_of(const std::string& hf_name, const ModelConfig& config) {
  const ArchitectureRecord& record = config.architecture_record();
  std::optional<TensorId> id = record.parse_tensor_name(record, hf_name);
  std::string_view module;
  if (!id && split_linear_param(hf_name, &module)) {
    // A quantization side tensor ("...q_proj.weight_scale_inv") takes its module's id; only the
    // matrices (Linear weights and the router) have such tensors.
    id = record.parse_tensor_name(record, std::string(module) + ".weight");
    if (id && !is_matrix_key(id->key)) id.reset();
  }
  if (!id || !config_has_tensor(*id, config)) return std::nullopt;
  return id;
}

TensorRole classify_tensor(const std::string& hf_name, const ModelConfig& config) {
  std::string_view name = hf_name;
  // Rotary buffers some exports save (model.rotary_emb.inv_freq, ...self_attn.rotary_emb.inv_freq).
  if (name.ends_with("rotary_emb.inv_freq")) return TensorRole::kRotaryInvFreq;
  for (std::string_view vision : config.architecture_record().vision_modules)
    if (name.starts_with(vision) && name.substr(vision.size(), 1) == ".")
      return TensorRole::kVision;
  // M3: language_model.model.mtp.layers.N.*; vLLM skips any name with an "mtp." component.
  if (name.starts_with("mtp.") || name.find(".mtp.") != std::string_view::npos)
    return TensorRole::kMtp;
  if (std::optional<TensorId> id = tensor_id_of(hf_name, config)) return tensor_key_role(id->key);
  // M2 numbers its MTP modules after the main layers: model.layers.62..64 (spec §3.3).
  const ArchitectureRecord& record = config.architecture_record();
  const std::optional<int> layer = record.layer_of_name(record, name);
  if (layer && *layer >= config.num_layers && *layer < config.num_layers + config.num_mtp_modules)
    return TensorRole::kMtp;
  return TensorRole::kUnknown;
}

bool engine_skips(TensorRole role) {
  return role == TensorRole::kMtp || role == TensorRole::kVision ||
         role == TensorRole::kRotaryInvFreq;
}

std::string module_name(const std::string& tensor_name) {
  constexpr std::string_view kWeight = ".weight";
  if (tensor_name.ends_with(kWeight))
    return tensor_name.substr(0, tensor_name.size() - kWeight.size());
  return tensor_name;
}

std::vector<StoredTensor> stored_tensors(const TensorSpec& spec, const QuantConfig& quant) {
  std::string module = module_name(spec.name);
  const LinearLayout layout = spec.linear ? quant.layout_of(module) : LinearLayout::kBf16;
  if (layout == LinearLayout::kBf16) {
    bool f32 = spec.role == TensorRole::kRouter || spec.role == TensorRole::kRouterBias;
    return {{spec.name, f32 ? DType::kF32 : DType::kBF16, spec.shape}};
  }
  if (spec.shape.size() != 2)
    fail("tensor {}: a quantized Linear weight must be 2-D [out, in]", spec.name);
  const int64_t out = spec.shape[0], in = spec.shape[1];
  auto require_multiple = [&](int64_t block) {
    if (in % block != 0)
      fail("tensor {}: input width {} is not a multiple of the {} block of {}", spec.name, in,
           linear_layout_name(layout), block);
  };
  const StoredTensor fp8_codes{spec.name, DType::kF8_E4M3, {out, in}};
  switch (layout) {
    case LinearLayout::kBf16:
      break;
    case LinearLayout::kFp8Block:
      return {fp8_codes,
              {module + ".weight_scale_inv",
               DType::kF32,
               {ceil_div(out, quant.block_n), ceil_div(in, quant.block_k)}}};
    case LinearLayout::kFp8Channel:
      return {fp8_codes, {module + ".weight_scale", DType::kF32, {out, 1}}};
    case LinearLayout::kQuarkFp8Channel:
    case LinearLayout::kQuarkFp8Tensor: {
      std::vector<StoredTensor> t = {
          fp8_codes,
          {module + ".weight_scale", DType::kF32,
           layout == LinearLayout::kQuarkFp8Channel ? std::vector<int64_t>{out}
                                                    : std::vector<int64_t>{}}};
      const QuarkFp8Layers* fp8 = quant.quark_fp8_layers_of(module);
      if (fp8 != nullptr && fp8->static_input)
        t.push_back({module + ".input_scale", DType::kF32, {}});
      return t;
    }
    case LinearLayout::kMxfp4:
      require_multiple(32);
      return {{spec.name, DType::kU8, {out, in / 2}},
              {module + ".weight_scale", DType::kU8, {out, in / 32}}};
    case LinearLayout::kMxfp8:
      require_multiple(32);
      return {fp8_codes, {module + ".weight_scale_inv", DType::kU8, {out, in / 32}}};
    case LinearLayout::kNvfp4:
      require_multiple(16);
      return {{spec.name, DType::kU8, {out, in / 2}},
              {module + ".weight_scale", DType::kF8_E4M3, {out, in / 16}},
              {module + ".weight_scale_2", DType::kF32, {}},
              {module + ".input_scale", DType::kF32, {}}};
  }
  return {{spec.name, DType::kBF16, spec.shape}};
}

}  // namespace minimax
