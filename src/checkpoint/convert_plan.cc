// plan_conversion: which output tensor each source tensor becomes, and the output config.json.
#include "checkpoint/convert_plan.h"

#include <algorithm>

#include "base/error.h"
#include "checkpoint/quant_config.h"
#include "checkpoint/tensor_table.h"

namespace minimax {
namespace {

constexpr std::string_view kWeightSuffix = ".weight";
constexpr std::string_view kScaleSuffix = ".weight_scale";

std::string strip(const std::string& name, std::string_view suffix) {
  return name.substr(0, name.size() - suffix.size());
}

// The MXFP4 view of `module` when its weight is U8 and a U8 weight_scale sits beside it; nullopt
// for anything else. Shapes that do not fit together are an error.
std::optional<Mxfp4Source> find_mxfp4(const TensorStore& store, const std::string& module) {
  TensorRef weight = store.find(module + std::string(kWeightSuffix));
  TensorRef scales = store.find(module + std::string(kScaleSuffix));
  if (!weight || !scales || weight.info->dtype != DType::kU8 || scales.info->dtype != DType::kU8)
    return std::nullopt;
  const auto& ws = weight.info->shape;
  const auto& ss = scales.info->shape;
  if (ws.size() != 2 || ss.size() != 2 || ws[0] != ss[0] || ws[1] * 2 != ss[1] * 32 || ws[1] <= 0) {
    fail(
        "{}: tensor '{}' {} and its scales '{}' {} are not an MXFP4 pair (expected packed U8 "
        "[out, in/2] and U8 [out, in/32])",
        weight.file->path(), weight.info->name, shape_string(ws), scales.info->name,
        shape_string(ss));
  }
  return Mxfp4Source{weight, scales, ws[0], ws[1] * 2};
}

// Roles whose 2-D ".weight" tensors are Linear modules a compressed-tensors loader matches
// against `targets` / `ignore`. MTP layers (past num_hidden_layers, or under mtp.) are decoder
// layers plus a Linear eh_proj: the engine skips them, but the config must still describe them.
bool is_linear_role(TensorRole role) {
  switch (role) {
    case TensorRole::kMtp:
    case TensorRole::kAttention:
    case TensorRole::kRouter:
    case TensorRole::kRoutedExpert:
    case TensorRole::kSharedExpert:
    case TensorRole::kDenseFfn:
    case TensorRole::kIndexBranch:
    case TensorRole::kLmHead:
      return true;
    default:
      return false;
  }
}

// The config written must make a stock loader expect exactly the tensors written: FP8 + scale for
// the routed experts and the copied FP8 layers, the stored dtype for every other Linear.
void check_config_matches(const nlohmann::json& config, const ConvertPlan& plan,
                          const ModelConfig& model) {
  const QuantConfig written = detect_quantization(config, std::nullopt, "converted config.json");
  if (written.scheme != QuantScheme::kFp8Channel)
    fail("converted config.json: quantization_config is not compressed-tensors FP8");
  for (const OutputShard& shard : plan.shards) {
    for (const OutputTensor& t : shard.tensors) {
      if (!t.decl.name.ends_with(kWeightSuffix) || t.decl.shape.size() != 2) continue;
      const TensorRole role = classify_tensor(t.decl.name, model);
      if (!is_linear_role(role)) continue;
      const std::string module = strip(t.decl.name, kWeightSuffix);
      const bool fp8 = t.decl.dtype == DType::kF8_E4M3;
      if (written.is_quantized(module) != fp8)
        fail(
            "converted config.json: module '{}' is written as {} but the config's ignore list "
            "makes a loader expect {}",
            module, dtype_name(t.decl.dtype), fp8 ? "it unquantized" : "FP8");
    }
  }
}

// A Quark FP8 layer (kMxfp4Fp8Attn's attention): its weight and scale are copied, the scale
// declared [out, 1]. Only what compressed-tensors' per-channel FP8_DYNAMIC group expresses: FP8
// weights per output row, dynamic per-token activations (AMD's "ptpc_fp8").
std::optional<TensorDecl> quark_fp8_copy(const TensorStore& source, const QuantConfig& quant,
                                         Fp8Target target, const SafetensorsFile& file,
                                         const TensorInfo& info) {
  const bool is_weight = info.name.ends_with(kWeightSuffix);
  const bool is_scale = info.name.ends_with(kScaleSuffix);
  const bool is_input = info.name.ends_with(".input_scale");
  if (!is_weight && !is_scale && !is_input) return std::nullopt;
  const std::string module = strip(info.name, is_weight  ? kWeightSuffix
                                              : is_scale ? kScaleSuffix
                                                         : ".input_scale");
  const LinearLayout layout = quant.layout_of(module);
  if (layout != LinearLayout::kQuarkFp8Channel && layout != LinearLayout::kQuarkFp8Tensor)
    return std::nullopt;
  // The pattern also reaches modules that are not Linears ("*self_attn*" has the q/k norms):
  // only an F8_E4M3 weight is an FP8 layer. A Linear the config calls FP8 but stored otherwise
  // is copied and then caught by check_config_matches.
  TensorRef weight = source.find(module + std::string(kWeightSuffix));
  if (!weight || weight.info->dtype != DType::kF8_E4M3) return std::nullopt;
  const QuarkFp8Layers* layers = quant.quark_fp8_layers_of(module);
  if (target == Fp8Target::kGaudi2)
    fail(
        "{}: '{}' is a Quark FP8 layer (layer_quant_config '{}'): its e4m3fn codes are copied as "
        "they are and may lie beyond Gaudi 2's 240; convert it for --target ocp",
        file.path(), module, layers->pattern);
  if (layout == LinearLayout::kQuarkFp8Tensor || layers->static_input)
    fail(
        "{}: '{}' is a Quark FP8 layer with {} (layer_quant_config '{}'); convert writes one "
        "compressed-tensors group of per-channel FP8 weights with dynamic per-token "
        "activations and cannot express it",
        file.path(), module,
        layout == LinearLayout::kQuarkFp8Tensor ? "a per-tensor weight scale"
                                                : "static input scales",
        layers->pattern);
  TensorRef scale = source.find(module + std::string(kScaleSuffix));
  if (!scale || weight.info->shape.size() != 2 || scale.info->dtype != DType::kF32 ||
      scale.info->shape != std::vector<int64_t>{weight.info->shape[0]})
    fail(
        "{}: Quark FP8 layer '{}' is not an F8_E4M3 weight [out, in] with an F32 weight_scale "
        "[out] beside it",
        file.path(), module);
  if (is_input)
    fail("{}: '{}': unexpected input_scale of a dynamic FP8 layer", file.path(), info.name);
  if (is_weight) return TensorDecl{info.name, info.dtype, info.shape};
  return TensorDecl{info.name, info.dtype, {info.shape[0], 1}};
}

}  // namespace

uint64_t OutputShard::data_bytes() const {
  uint64_t total = 0;
  for (const OutputTensor& t : tensors) total += t.decl.nbytes();
  return total;
}

nlohmann::json converted_config_json(const ModelConfig& model, const QuantConfig& source,
                                     Fp8Target target,
                                     const std::vector<std::string>& also_ignore) {
  nlohmann::json config = model.raw;
  nlohmann::json quant = converted_fp8_config_json(model, source);
  for (const std::string& module : also_ignore) quant["ignore"].push_back(module);
  if (target == Fp8Target::kGaudi2) quant["fp8_dtype_flavor"] = "float8_e4m3fnuz";
  return with_quantization_config(config, quant);
}

std::vector<TensorDecl> safetensors_write_order(std::vector<TensorDecl> decls) {
  std::stable_sort(decls.begin(), decls.end(), [](const TensorDecl& a, const TensorDecl& b) {
    return dtype_alignment(a.dtype) > dtype_alignment(b.dtype);
  });
  return decls;
}

const std::map<std::string, std::string>& converted_shard_metadata() {
  static const std::map<std::string, std::string> metadata = {{"format", "pt"}};
  return metadata;
}

ConvertPlan plan_conversion(const TensorStore& source, const ModelConfig& model,
                            const QuantConfig& quant, Fp8Target target) {
  ConvertPlan plan;
  plan.sharded = source.sharded();
  for (size_t s = 0; s < source.num_shards(); ++s) {
    const SafetensorsFile& file = source.shard(s);
    OutputShard shard{source.shard_names()[s], {}};
    for (const TensorInfo& info : file.tensors()) {
      plan.source_bytes += info.nbytes();
      const TensorRole role = classify_tensor(info.name, model);
      std::optional<Mxfp4Source> mxfp4;
      const bool is_weight = info.name.ends_with(kWeightSuffix);
      const bool is_scale = info.name.ends_with(kScaleSuffix);
      if (is_weight) mxfp4 = find_mxfp4(source, strip(info.name, kWeightSuffix));
      if (is_scale) mxfp4 = find_mxfp4(source, strip(info.name, kScaleSuffix));
      OutputTensor out;
      if (std::optional<TensorDecl> fp8 = quark_fp8_copy(source, quant, target, file, info)) {
        out.decl = *fp8;
        out.kind = OutputKind::kCopy;
        out.copy_source = TensorRef{&file, &info};
        ++plan.copied;
        if (info.name.ends_with(kWeightSuffix)) ++plan.fp8_copied;
        plan.output_bytes += out.decl.nbytes();
        shard.tensors.push_back(std::move(out));
        continue;
      }
      if (role == TensorRole::kRoutedExpert && !mxfp4) {
        fail(
            "{}: routed expert tensor '{}' ({} {}) is not part of an MXFP4 weight (U8 weight + "
            "U8 weight_scale); only MXFP4 experts can be re-encoded",
            file.path(), info.name, dtype_name(info.dtype), shape_string(info.shape));
      }
      if (!mxfp4) {
        out.decl = {info.name, info.dtype, info.shape};
        out.kind = OutputKind::kCopy;
        out.copy_source = TensorRef{&file, &info};
        ++plan.copied;
      } else if (role == TensorRole::kRoutedExpert) {
        out.mxfp4 = *mxfp4;
        if (is_weight) {
          out.kind = OutputKind::kFp8Weight;
          out.decl = {info.name, DType::kF8_E4M3, {mxfp4->rows, mxfp4->cols}};
          ++plan.fp8_weights;
        } else {
          out.kind = OutputKind::kFp8Scale;
          out.decl = {info.name, DType::kF32, {mxfp4->rows, 1}};
        }
      } else if (is_weight) {
        out.kind = OutputKind::kBf16Weight;
        out.mxfp4 = *mxfp4;
        out.decl = {info.name, DType::kBF16, {mxfp4->rows, mxfp4->cols}};
        ++plan.bf16_weights;
      } else {
        ++plan.dropped_scales;  // a BF16 weight carries no scale
        continue;
      }
      plan.output_bytes += out.decl.nbytes();
      shard.tensors.push_back(std::move(out));
    }
    plan.shards.push_back(std::move(shard));
  }
  // MTP layers are not in the tensor table the ignore list comes from: name their Linears (copied,
  // or MXFP4 written as BF16) so that a loader does not expect FP8 for them.
  std::vector<std::string> mtp_linears;
  for (const OutputShard& shard : plan.shards)
    for (const OutputTensor& t : shard.tensors)
      if (t.kind != OutputKind::kFp8Weight && t.decl.dtype != DType::kF8_E4M3 &&
          t.decl.shape.size() == 2 && t.decl.name.ends_with(kWeightSuffix) &&
          classify_tensor(t.decl.name, model) == TensorRole::kMtp)
        mtp_linears.push_back(strip(t.decl.name, kWeightSuffix));
  plan.config = converted_config_json(model, quant, target, mtp_linears);
  check_config_matches(plan.config, plan, model);
  return plan;
}

}  // namespace minimax
