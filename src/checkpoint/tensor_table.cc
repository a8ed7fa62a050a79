// Tensor table construction, name classification and the stored layout of each quantization scheme.
#include "checkpoint/tensor_table.h"

#include <array>
#include <span>

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

// Adds every weight of `config` in the rows' order: a run of model-scope rows once, a run of
// layer rows once per layer, and within it a run of expert rows once per routed expert.
class TableBuilder {
 public:
  explicit TableBuilder(const ModelConfig& config)
      : c_(config), record_(config.architecture_record()) {}

  std::vector<TensorSpec> build() {
    const std::span<const TensorRow> rows = tensor_rows();
    for (size_t i = 0; i < rows.size();) {
      const size_t end = run_end(rows, i);
      const std::span<const TensorRow> run = rows.subspan(i, end - i);
      if (rows[i].scope == TensorScope::kModel)
        add_run(run, -1);
      else
        for (int l = 0; l < c_.num_layers; ++l) add_run(run, l);
      i = end;
    }
    return std::move(table_);
  }

 private:
  // The end of the run that starts at `i`: model rows, or the layer rows with their expert runs.
  static size_t run_end(std::span<const TensorRow> rows, size_t i) {
    const bool model = rows[i].scope == TensorScope::kModel;
    size_t end = i + 1;
    while (end < rows.size() && (rows[end].scope == TensorScope::kModel) == model) ++end;
    return end;
  }

  void add_run(std::span<const TensorRow> rows, int layer) {
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].scope != TensorScope::kExpert) {
        add(rows[i], {rows[i].key, layer});
        continue;
      }
      size_t end = i;
      while (end < rows.size() && rows[end].scope == TensorScope::kExpert) ++end;
      for (int e = 0; e < c_.num_experts; ++e)
        for (size_t j = i; j < end; ++j) add(rows[j], {rows[j].key, layer, e});
      i = end - 1;
    }
  }

  // Adds `id` when the config has it.
  void add(const TensorRow& row, const TensorId& id) {
    if (!config_has_tensor(id, c_)) return;
    std::vector<int64_t> shape = {dim_size(row.rows, c_)};
    if (row.cols != Dim::kNone) shape.push_back(dim_size(row.cols, c_));
    table_.push_back({record_.tensor_name(record_, id), row.role, std::move(shape), id.layer,
                      id.expert, row.form == WeightForm::kLinear, id,
                      tensor_split_rules(id.key, c_)});
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
    if (id && tensor_row(id->key).form == WeightForm::kPlain) id.reset();
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
