// compressed-tensors FP8 (quant_method "compressed-tensors", float-quantized): F8_E4M3 weights with
// a per-row F32 weight_scale and dynamic per-token activations. What `minimax convert` writes.
#include <optional>

#include "checkpoint/arch/architecture.h"
#include "checkpoint/name_patterns.h"
#include "checkpoint/quant/quant_scheme.h"
#include "checkpoint/tensor_table.h"

namespace minimax {

using nlohmann::json;

namespace {

// One config group's weights and input activations; returns whether activations are dynamic.
bool read_group(const ConfigFields& group, const std::string& format) {
  std::string group_format = group.string_or("format", format);
  if (group_format != "float-quantized")
    group.error("format",
                fmt::format("'{}' is not supported (only float-quantized FP8)", group_format));
  ConfigFields w = group.child("weights");
  w.expect("type", "float", "only FP8 weights are supported");
  w.expect("num_bits", 8, "only FP8 weights are supported");
  w.expect("strategy", "channel", "only per-channel FP8 weight scales are supported");
  if (!w.boolean_or("symmetric", true)) w.error("symmetric", "asymmetric FP8 is not supported");
  if (w.boolean_or("dynamic", false)) w.error("dynamic", "dynamic weight scales are not supported");
  bool dynamic = false;
  if (group.has("input_activations")) {
    ConfigFields a = group.child("input_activations");
    a.expect("type", "float", "only FP8 activations are supported");
    a.expect("num_bits", 8, "only FP8 activations are supported");
    std::string strategy = a.string("strategy");
    dynamic = a.has("dynamic") && a.get("dynamic") != false;
    if (strategy == "token" && !dynamic)
      a.error("dynamic", "per-token activation scales must be dynamic");
    if (strategy != "token" && strategy != "tensor")
      a.error("strategy", fmt::format("'{}' is not supported (token or tensor)", strategy));
  }
  if (group.has("output_activations"))
    group.error("output_activations", "output quantization is not supported");
  return dynamic;
}

json quant_args(const char* strategy, bool dynamic) {
  return json{{"num_bits", 8},
              {"type", "float"},
              {"symmetric", true},
              {"group_size", nullptr},
              {"strategy", strategy},
              {"block_structure", nullptr},
              {"dynamic", dynamic},
              {"actorder", nullptr},
              {"observer", dynamic ? json() : json("minmax")},
              {"observer_kwargs", json::object()}};
}

// compressed-tensors lists every Linear it left unquantized by name; here that is everything but
// the routed experts and the Linears `source` stores as Quark per-channel FP8 (the converter's
// output: experts FP8, FP8 layers copied, the rest as in the source).
json fp8_channel_json(const ModelConfig& model, const QuantConfig* source) {
  json ignore = json::array();
  for (const TensorSpec& spec : tensor_table(model)) {
    const std::string module = module_name(spec.name);
    const bool copied_fp8 = source != nullptr && spec.linear &&
                            source->layout_of(module) == LinearLayout::kQuarkFp8Channel;
    if (spec.role == TensorRole::kRouter ||
        (spec.linear && spec.role != TensorRole::kRoutedExpert && !copied_fp8))
      ignore.push_back(module);
  }
  for (std::string_view vision : model.architecture_record().vision_modules)
    ignore.push_back(fmt::format("re:^{}\\.", vision));
  json group = {{"targets", {"Linear"}},
                {"weights", quant_args("channel", false)},
                {"input_activations", quant_args("token", true)},
                {"output_activations", nullptr},
                {"format", "float-quantized"}};
  return {{"quant_method", "compressed-tensors"},
          {"format", "float-quantized"},
          {"quantization_status", "compressed"},
          {"config_groups", {{"group_0", group}}},
          {"ignore", ignore},
          {"kv_cache_scheme", nullptr},
          {"global_compression_ratio", nullptr},
          {"sparsity_config", json::object()}};
}

// `targets` and `ignore` entries may also be module class names; every module asked about here is
// a Linear.
bool matches_entry(const std::string& entry, const std::string& module) {
  return entry == "Linear" || matches_compressed_tensors(entry, module);
}

}  // namespace

QuantConfig read_fp8_channel(const ConfigFields& q) {
  QuantConfig out;
  out.scheme = QuantScheme::kFp8Channel;
  std::string format = q.string_or("format", "float-quantized");
  std::string status = q.string_or("quantization_status", "compressed");
  if (status != "compressed")
    q.error("quantization_status", fmt::format("'{}': only compressed checkpoints load", status));
  ConfigFields groups = q.child("config_groups");
  if (groups.json().empty()) q.error("config_groups", "has no group");
  std::optional<json> first_scheme;
  for (const auto& [group_name, group_json] : groups.json().items()) {
    ConfigFields group = groups.child(group_name);
    const bool dynamic = read_group(group, format);
    // One scheme for the whole model: the loader has one FP8 path.
    json scheme = {{"weights", group.json().at("weights")}, {"dynamic", dynamic}};
    if (first_scheme && *first_scheme != scheme)
      group.error("weights", "differs from another config group; mixed schemes are not supported");
    first_scheme = scheme;
    out.dynamic_activations = dynamic;
    for (std::string& target : group.strings("targets")) out.targets.push_back(std::move(target));
  }
  if (out.targets.empty()) q.error("config_groups", "no group has targets");
  out.ignore = q.strings("ignore");
  out.fp8_flavor = q.string_or("fp8_dtype_flavor", "");
  return out;
}

json write_fp8_channel(const ModelConfig& model) { return fp8_channel_json(model, nullptr); }

LinearLayout fp8_channel_layout(const QuantConfig& q, const std::string& module) {
  const bool quantized = any_entry_matches(q.targets, module, matches_entry) &&
                         !any_entry_matches(q.ignore, module, matches_entry);
  return quantized ? LinearLayout::kFp8Channel : LinearLayout::kBf16;
}

json converted_fp8_config_json(const ModelConfig& model, const QuantConfig& source) {
  return fp8_channel_json(model, &source);
}

}  // namespace minimax
