// Quantization detection from config.json / hf_quant_config.json, and ignore-list membership.
#include "checkpoint/quant_config.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <span>

#include "base/error.h"
#include "checkpoint/arch/architecture.h"
#include "checkpoint/name_patterns.h"
#include "checkpoint/tensor_table.h"

namespace minimax {
namespace {

using nlohmann::json;

// Typed access to one JSON object; errors name the file and the dotted field path.
struct Reader {
  const json& object;
  std::string file;
  std::string prefix;

  [[noreturn]] void error(std::string_view key, std::string_view message) const {
    fail("{}: field '{}{}': {}", file, prefix, key, message);
  }
  bool has(std::string_view key) const {
    auto it = object.find(key);
    return it != object.end() && !it->is_null();
  }
  const json& get(std::string_view key) const {
    if (!has(key)) error(key, "required but missing");
    return object.at(key);
  }
  Reader child(std::string_view key) const {
    const json& value = get(key);
    if (!value.is_object()) error(key, fmt::format("must be an object, got {}", value.type_name()));
    return {value, file, prefix + std::string(key) + "."};
  }
  std::string string(std::string_view key) const {
    const json& value = get(key);
    if (!value.is_string()) error(key, fmt::format("must be a string, got {}", value.dump()));
    return value.get<std::string>();
  }
  std::string string_or(std::string_view key, std::string fallback) const {
    return has(key) ? string(key) : fallback;
  }
  int integer(std::string_view key) const {
    const json& value = get(key);
    if (!value.is_number_integer())
      error(key, fmt::format("must be an integer, got {}", value.dump()));
    return value.get<int>();
  }
  bool boolean_or(std::string_view key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& value = object.at(key);
    if (!value.is_boolean()) error(key, fmt::format("must be true or false, got {}", value.dump()));
    return value.get<bool>();
  }
  // A list of strings; null or absent is empty.
  std::vector<std::string> strings(std::string_view key) const {
    std::vector<std::string> out;
    if (!has(key)) return out;
    const json& value = object.at(key);
    if (!value.is_array())
      error(key, fmt::format("must be a list of strings, got {}", value.dump()));
    for (const json& item : value) {
      if (!item.is_string())
        error(key, fmt::format("must be a list of strings, has {}", item.dump()));
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  void expect(std::string_view key, const json& wanted, std::string_view what) const {
    if (!has(key) || object.at(key) != wanted)
      error(key, fmt::format("{} (expected {}, got {})", what, wanted.dump(),
                             has(key) ? object.at(key).dump() : "nothing"));
  }
};

std::string upper(std::string text) {
  for (char& ch : text) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return text;
}

QuantConfig from_fp8(const Reader& q) {
  QuantConfig out;
  out.scheme = QuantScheme::kFp8Block;
  out.fp8_flavor = q.string_or("fmt", "float8_e4m3fn");
  if (out.fp8_flavor != "float8_e4m3fn")
    q.error("fmt", fmt::format("'{}' is not supported (only float8_e4m3fn)", out.fp8_flavor));
  out.dynamic_activations = q.string_or("activation_scheme", "dynamic") == "dynamic";
  if (!q.has("weight_block_size"))
    q.error("weight_block_size", "missing: per-tensor FP8 is not supported, only block FP8");
  const json& block = q.get("weight_block_size");
  if (!block.is_array() || block.size() != 2 || !block[0].is_number_integer() ||
      !block[1].is_number_integer() || block[0].get<int>() <= 0 || block[1].get<int>() <= 0)
    q.error("weight_block_size",
            fmt::format("must be [n, k] positive integers, got {}", block.dump()));
  out.block_n = block[0].get<int>();
  out.block_k = block[1].get<int>();
  out.ignore = q.has("modules_to_not_convert") ? q.strings("modules_to_not_convert")
                                               : q.strings("ignored_layers");
  return out;
}

QuantConfig from_compressed_tensors(const Reader& q) {
  QuantConfig out;
  out.scheme = QuantScheme::kFp8Channel;
  std::string format = q.string_or("format", "float-quantized");
  std::string status = q.string_or("quantization_status", "compressed");
  if (status != "compressed")
    q.error("quantization_status", fmt::format("'{}': only compressed checkpoints load", status));
  Reader groups = q.child("config_groups");
  if (groups.object.empty()) q.error("config_groups", "has no group");
  std::optional<json> first_scheme;
  for (const auto& [group_name, group_json] : groups.object.items()) {
    Reader group = groups.child(group_name);
    std::string group_format = group.string_or("format", format);
    if (group_format != "float-quantized")
      group.error("format",
                  fmt::format("'{}' is not supported (only float-quantized FP8)", group_format));
    Reader w = group.child("weights");
    w.expect("type", "float", "only FP8 weights are supported");
    w.expect("num_bits", 8, "only FP8 weights are supported");
    w.expect("strategy", "channel", "only per-channel FP8 weight scales are supported");
    if (!w.boolean_or("symmetric", true)) w.error("symmetric", "asymmetric FP8 is not supported");
    if (w.boolean_or("dynamic", false))
      w.error("dynamic", "dynamic weight scales are not supported");
    bool dynamic = false;
    if (group.has("input_activations")) {
      Reader a = group.child("input_activations");
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
    // One scheme for the whole model: the loader has one FP8 path.
    json scheme = {{"weights", group.object.at("weights")}, {"dynamic", dynamic}};
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

// A layer_quant_config entry that stores Linears in FP8 (Quark "fp8_e4m3" weights, per channel or
// per tensor, as vLLM's QuarkW8A8Fp8 takes them). Other overrides are errors naming the entry.
QuarkFp8Layers quark_fp8_layers(const Reader& entry, const std::string& pattern) {
  if (entry.has("weight") && entry.get("weight").is_array())
    entry.error("weight", "a list of weight specs is not supported");
  Reader w = entry.child("weight");
  w.expect("dtype", "fp8_e4m3", "only FP8 per-layer overrides of an MXFP4 model are supported");
  const std::string wq = w.string("qscheme");
  if (wq != "per_channel" && wq != "per_tensor")
    w.error("qscheme", fmt::format("'{}' is not supported (per_channel or per_tensor)", wq));
  if (w.boolean_or("is_dynamic", false)) w.error("is_dynamic", "dynamic weights are not supported");
  if (wq == "per_channel" && w.has("ch_axis") && w.integer("ch_axis") != 0)
    w.error("ch_axis", "per-channel FP8 weights must be scaled per output row (ch_axis 0)");
  QuarkFp8Layers out{pattern, wq == "per_channel", false};
  if (entry.has("input_tensors")) {
    Reader a = entry.child("input_tensors");
    a.expect("dtype", "fp8_e4m3", "FP8 weights need FP8 activations");
    const std::string aq = a.string("qscheme");
    out.static_input = !a.boolean_or("is_dynamic", false);
    // Static: one calibrated input_scale; dynamic: per token (Quark's per_channel, ch_axis 1) or
    // per tensor, computed on the fly.
    if (out.static_input ? aq != "per_tensor" : (aq != "per_channel" && aq != "per_tensor"))
      a.error("qscheme", fmt::format("'{}' is not supported for {} FP8 activations", aq,
                                     out.static_input ? "static" : "dynamic"));
  }
  for (std::string_view key : {"output_tensors", "bias"})
    if (entry.has(key)) entry.error(key, "quantization of this tensor is not supported");
  return out;
}

QuantConfig from_quark(const Reader& q) {
  QuantConfig out;
  out.scheme = QuantScheme::kMxfp4;
  Reader global = q.child("global_quant_config");
  if (global.has("weight") && global.get("weight").is_array())
    global.error("weight", "a list of weight specs (Quark NVFP4 / mixed) is not supported");
  Reader w = global.child("weight");
  w.expect("dtype", "fp4", "only MXFP4 Quark checkpoints are supported");
  w.expect("qscheme", "per_group", "only MXFP4 Quark checkpoints are supported");
  w.expect("group_size", 32, "only MXFP4 Quark checkpoints are supported");
  w.expect("scale_format", "e8m0", "only MXFP4 Quark checkpoints are supported");
  out.group_size = 32;
  out.dynamic_activations = false;
  if (global.has("input_tensors"))
    out.dynamic_activations = global.child("input_tensors").boolean_or("is_dynamic", false);
  for (std::string_view key : {"output_tensors", "bias"})
    if (global.has(key)) global.error(key, "quantization of this tensor is not supported");
  if (q.has("layer_type_quant_config") && !q.get("layer_type_quant_config").empty())
    q.error("layer_type_quant_config", "per-module-type overrides are not supported");
  if (q.has("layer_quant_config")) {
    Reader layers = q.child("layer_quant_config");
    for (const auto& [pattern, spec] : layers.object.items()) {
      Reader entry = layers.child(pattern);
      // An entry that repeats the global MXFP4 weight spec changes nothing.
      if (entry.has("weight") && entry.get("weight") == global.get("weight")) continue;
      out.fp8_layers.push_back(quark_fp8_layers(entry, pattern));
    }
  }
  if (!out.fp8_layers.empty()) out.scheme = QuantScheme::kMxfp4Fp8Attn;
  q.child("export");  // vLLM refuses a Quark config without it
  out.ignore = q.strings("exclude");
  return out;
}

// MiniMaxAI/MiniMax-M3-MXFP8: {"quant_method": "mxfp8", "activation_scheme": "dynamic",
// "weight_block_size": [1, 32], "ignored_layers": [...]}. vLLM reads it as ModelOpt MXFP8 (its
// ignored_layers becoming exclude_modules) with the checkpoint's weight_scale_inv renamed
// weight_scale; TensorRT-LLM asserts the [1, 32] block (docs/checkpoint.md).
QuantConfig from_mxfp8(const Reader& q) {
  QuantConfig out;
  out.scheme = QuantScheme::kMxfp8;
  out.group_size = 32;
  const std::string activations = q.string_or("activation_scheme", "dynamic");
  if (activations != "dynamic")
    q.error("activation_scheme", fmt::format("'{}': MXFP8 activations are dynamic", activations));
  if (q.has("weight_block_size")) q.expect("weight_block_size", {1, 32}, "MXFP8 blocks are 1x32");
  if (q.has("fmt")) q.expect("fmt", "e4m3", "MXFP8 elements are e4m3");
  if (q.has("scale_fmt")) q.expect("scale_fmt", "ue8m0", "MXFP8 scales are e8m0");
  // vLLM: ignored_layers, or modules_to_not_convert when that is empty.
  out.ignore = q.strings("ignored_layers");
  if (out.ignore.empty()) out.ignore = q.strings("modules_to_not_convert");
  return out;
}

// ModelOpt: the config.json style ({"quant_method": "modelopt", "quant_algo": ..., "ignore"}) or
// the legacy hf_quant_config.json ({"quantization": {"quant_algo", "exclude_modules", ...}}).
QuantConfig from_modelopt(const Reader& q) {
  if (q.has("quantization")) {
    return from_modelopt(q.child("quantization"));
  }
  QuantConfig out;
  out.scheme = QuantScheme::kNvfp4;
  std::string algo = upper(q.string("quant_algo"));
  if (algo != "NVFP4")
    q.error("quant_algo", fmt::format("'{}' is not supported (only NVFP4)", algo));
  out.group_size = q.has("group_size") ? q.integer("group_size") : 16;
  if (out.group_size != 16)
    q.error("group_size", fmt::format("{} is not NVFP4's 16", out.group_size));
  out.ignore = q.has("ignore") ? q.strings("ignore") : q.strings("exclude_modules");
  // NVFP4 is W4A4: activations use the stored per-tensor input_scale.
  out.dynamic_activations = false;
  return out;
}

// config.json's quantization_config: at the top level, or (some VL exports) under text_config.
// Sets *field to the dotted path it was found at, for messages.
const json* find_quantization_config(const json& config, std::string* field) {
  auto lookup = [](const json& object) -> const json* {
    auto it = object.find("quantization_config");
    return it != object.end() && !it->is_null() ? &*it : nullptr;
  };
  *field = "quantization_config.";
  if (const json* found = lookup(config)) return found;
  *field = "text_config.quantization_config.";
  auto text = config.find("text_config");
  if (text != config.end() && text->is_object()) return lookup(*text);
  return nullptr;
}

std::string sibling_file(const std::string& source, std::string_view file_name) {
  std::filesystem::path path(source);
  if (path.filename() == "config.json") return (path.parent_path() / file_name).string();
  return fmt::format("{} ({})", source, file_name);
}

std::string strip_weight_suffix(const std::string& name) {
  constexpr std::string_view kWeight = ".weight";
  if (name.size() > kWeight.size() &&
      name.compare(name.size() - kWeight.size(), kWeight.size(), kWeight) == 0)
    return name.substr(0, name.size() - kWeight.size());
  return name;
}

// --- The configs each release writes ---------------------------------------------------------

constexpr const char* kModelOptVersion = "0.39.0";

json fp8_block_json(const ModelConfig& model) {
  json not_convert = {"gate", "e_score_correction_bias", "lm_head"};
  for (std::string_view vision : model.architecture_record().vision_modules)
    not_convert.push_back(vision);
  return {{"activation_scheme", "dynamic"},
          {"fmt", "float8_e4m3fn"},
          {"quant_method", "fp8"},
          {"weight_block_size", {128, 128}},
          {"modules_to_not_convert", not_convert}};
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
  auto args = [](const char* strategy, bool dynamic) {
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
  };
  json group = {{"targets", {"Linear"}},
                {"weights", args("channel", false)},
                {"input_activations", args("token", true)},
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

// Quark's export; `fp8_attention` adds AMD's "ptpc_fp8" attention override (FP8 weights per
// output channel, dynamic per-token FP8 activations; vLLM's QuarkW8A8Fp8 with
// kFp8DynamicTokenSym) and leaves attention out of `exclude`.
json quark_mxfp4_json(const ModelConfig& model, bool fp8_attention) {
  // The architecture's Quark recipe (spec/formats.md §2.1).
  constexpr std::string_view kAttention = "*self_attn*";
  json exclude = json::array();
  for (std::string_view entry : model.architecture_record().quark_exclude)
    if (!fp8_attention || entry != kAttention) exclude.push_back(entry);
  auto spec = [](bool dynamic) {
    return json{{"dtype", "fp4"},
                {"is_dynamic", dynamic},
                {"qscheme", "per_group"},
                {"ch_axis", -1},
                {"group_size", 32},
                {"block_size", nullptr},
                {"symmetric", nullptr},
                {"round_method", "half_even"},
                {"scale_type", "float"},
                {"scale_format", "e8m0"},
                {"scale_calculation_mode", "even"},
                {"mx_element_dtype", nullptr},
                {"observer_cls", "PerBlockMXObserver"},
                {"is_scale_quant", false}};
  };
  auto fp8_spec = [](bool dynamic) {
    return json{{"dtype", "fp8_e4m3"},
                {"is_dynamic", dynamic},
                {"qscheme", "per_channel"},
                {"ch_axis", dynamic ? 1 : 0},  // activations per token, weights per output row
                {"group_size", nullptr},
                {"symmetric", nullptr},
                {"round_method", nullptr},
                {"scale_type", nullptr},
                {"scale_format", nullptr},
                {"scale_calculation_mode", nullptr},
                {"mx_element_dtype", nullptr},
                {"observer_cls", "PerChannelMinMaxObserver"},
                {"is_scale_quant", false}};
  };
  json layers = json::object();
  if (fp8_attention)
    layers[std::string(kAttention)] = {{"weight", fp8_spec(false)},
                                       {"input_tensors", fp8_spec(true)},
                                       {"output_tensors", nullptr},
                                       {"bias", nullptr}};
  return {{"quant_method", "quark"},
          {"version", "0.12"},
          {"quant_mode", "eager_mode"},
          {"global_quant_config",
           {{"weight", spec(false)},
            {"input_tensors", spec(true)},
            {"output_tensors", nullptr},
            {"bias", nullptr},
            {"target_device", nullptr}}},
          {"layer_quant_config", layers},
          {"layer_type_quant_config", json::object()},
          {"exclude", exclude},
          {"kv_cache_quant_config", json::object()},
          {"kv_cache_post_rope", false},
          {"algo_config", nullptr},
          {"softmax_quant_spec", nullptr},
          {"export",
           {{"kv_cache_group", json::array()},
            {"min_kv_scale", 0.0},
            {"pack_method", "reorder"},
            {"weight_format", "real_quantized"},
            {"weight_merge_groups", nullptr}}}};
}

// The published MiniMax-M3-MXFP8 config, ignored_layers from the architecture record.
json mxfp8_json(const ModelConfig& model) {
  json ignored = json::array();
  for (std::string_view entry : model.architecture_record().mxfp8_ignored_layers)
    ignored.push_back(entry);
  return {{"quant_method", "mxfp8"},
          {"activation_scheme", "dynamic"},
          {"weight_block_size", {1, 32}},
          {"ignored_layers", ignored}};
}

// As the MiniMax NVFP4 re-exports write it: lm_head, then per layer (layer numbers sorted as
// strings) the router and "self_attn*"; M3 adds its dense MLPs and the vision modules. Experts
// (routed and shared) are NVFP4.
json modelopt_ignore(const ModelConfig& model) {
  json ignore = {module_name(model.lm_head_name)};
  std::vector<std::string> layers;
  for (int l = 0; l < model.num_layers; ++l) layers.push_back(std::to_string(l));
  std::sort(layers.begin(), layers.end());
  for (const std::string& l : layers) {
    std::string p = model.tensor_prefix + "layers." + l + ".";
    if (model.is_moe_layer(std::stoi(l)))
      ignore.push_back(p + "block_sparse_moe.gate");
    else
      ignore.push_back(p + "mlp*");
    ignore.push_back(p + "self_attn*");
  }
  for (std::string_view vision : model.architecture_record().vision_modules)
    ignore.push_back(std::string(vision) + "*");
  return ignore;
}

json modelopt_nvfp4_json(const ModelConfig& model) {
  json args = {{"dynamic", false}, {"num_bits", 4}, {"type", "float"}, {"group_size", 16}};
  return {
      {"config_groups",
       {{"group_0", {{"input_activations", args}, {"weights", args}, {"targets", {"Linear"}}}}}},
      {"ignore", modelopt_ignore(model)},
      {"quant_algo", "NVFP4"},
      {"producer", {{"name", "modelopt"}, {"version", kModelOptVersion}}},
      {"quant_method", "modelopt"}};
}

}  // namespace

std::string_view quant_scheme_name(QuantScheme scheme) {
  switch (scheme) {
    case QuantScheme::kNone:
      return "bf16";
    case QuantScheme::kFp8Block:
      return "fp8-block";
    case QuantScheme::kFp8Channel:
      return "fp8-channel";
    case QuantScheme::kMxfp4:
      return "mxfp4";
    case QuantScheme::kNvfp4:
      return "nvfp4";
    case QuantScheme::kMxfp8:
      return "mxfp8";
    case QuantScheme::kMxfp4Fp8Attn:
      return "mxfp4-fp8attn";
  }
  return "bf16";
}

std::optional<QuantScheme> parse_quant_scheme_name(std::string_view name) {
  for (QuantScheme scheme : all_quant_schemes())
    if (quant_scheme_name(scheme) == name) return scheme;
  return std::nullopt;
}

std::span<const QuantScheme> all_quant_schemes() {
  static constexpr QuantScheme kAll[] = {
      QuantScheme::kNone,  QuantScheme::kFp8Block, QuantScheme::kFp8Channel,  QuantScheme::kMxfp4,
      QuantScheme::kNvfp4, QuantScheme::kMxfp8,    QuantScheme::kMxfp4Fp8Attn};
  return kAll;
}

std::string_view linear_layout_name(LinearLayout layout) {
  switch (layout) {
    case LinearLayout::kBf16:
      return "bf16";
    case LinearLayout::kFp8Block:
      return "fp8-block";
    case LinearLayout::kFp8Channel:
      return "fp8-channel";
    case LinearLayout::kQuarkFp8Channel:
      return "quark-fp8-channel";
    case LinearLayout::kQuarkFp8Tensor:
      return "quark-fp8-tensor";
    case LinearLayout::kMxfp4:
      return "mxfp4";
    case LinearLayout::kMxfp8:
      return "mxfp8";
    case LinearLayout::kNvfp4:
      return "nvfp4";
  }
  return "bf16";
}

LinearLayout QuantConfig::layout_of(const std::string& name) const {
  const std::string module = strip_weight_suffix(name);
  auto any = [&](const std::vector<std::string>& entries, auto&& matches) {
    return std::any_of(entries.begin(), entries.end(),
                       [&](const std::string& entry) { return matches(entry, module); });
  };
  auto unless = [](bool excluded, LinearLayout layout) {
    return excluded ? LinearLayout::kBf16 : layout;
  };
  switch (scheme) {
    case QuantScheme::kNone:
      return LinearLayout::kBf16;
    case QuantScheme::kFp8Block:
      return unless(any(ignore, matches_modules_to_not_convert), LinearLayout::kFp8Block);
    case QuantScheme::kFp8Channel: {
      // Entries may also be module class names; every module asked about here is a Linear.
      auto ct = [](const std::string& entry, const std::string& module_name) {
        return entry == "Linear" || matches_compressed_tensors(entry, module_name);
      };
      return unless(!any(targets, ct) || any(ignore, ct), LinearLayout::kFp8Channel);
    }
    case QuantScheme::kMxfp4:
    case QuantScheme::kMxfp4Fp8Attn:
      if (any(ignore, matches_quark)) return LinearLayout::kBf16;
      if (const QuarkFp8Layers* fp8 = quark_fp8_layers_of(module))
        return fp8->per_channel ? LinearLayout::kQuarkFp8Channel : LinearLayout::kQuarkFp8Tensor;
      return LinearLayout::kMxfp4;
    case QuantScheme::kNvfp4:
      return unless(any(ignore, matches_modelopt), LinearLayout::kNvfp4);
    case QuantScheme::kMxfp8:
      return unless(any(ignore, matches_modelopt), LinearLayout::kMxfp8);
  }
  return LinearLayout::kBf16;
}

const QuarkFp8Layers* QuantConfig::quark_fp8_layers_of(const std::string& name) const {
  const std::string module = strip_weight_suffix(name);
  // vLLM's _find_matched_config: a key with '*' is an fnmatch pattern, else the exact name.
  for (const QuarkFp8Layers& layers : fp8_layers) {
    const bool match = layers.pattern.find('*') != std::string::npos
                           ? glob_match(layers.pattern, module)
                           : layers.pattern == module;
    if (match) return &layers;
  }
  return nullptr;
}

QuantConfig detect_quantization(const json& config, const std::optional<json>& hf_quant_config,
                                const std::string& source) {
  std::string where;
  const json* qc = find_quantization_config(config, &where);
  std::string hf_source = sibling_file(source, "hf_quant_config.json");
  if (hf_quant_config && !hf_quant_config->is_object())
    fail("{}: must be a JSON object", hf_source);
  if (!qc) {
    if (!hf_quant_config) return QuantConfig{};  // BF16
    QuantConfig out = from_modelopt({*hf_quant_config, hf_source, ""});
    out.raw = *hf_quant_config;
    return out;
  }
  if (!qc->is_object()) fail("{}: field '{}': must be an object", source, where);
  Reader q{*qc, source, where};
  std::string method = q.string("quant_method");
  QuantConfig out;
  if (method == "fp8") {
    out = from_fp8(q);
  } else if (method == "compressed-tensors") {
    out = from_compressed_tensors(q);
  } else if (method == "quark") {
    out = from_quark(q);
  } else if (method == "modelopt") {
    out = from_modelopt(q);
  } else if (method == "mxfp8") {
    out = from_mxfp8(q);
  } else {
    q.error("quant_method",
            fmt::format("'{}' is not supported (supported: fp8 block, compressed-tensors FP8, "
                        "quark MXFP4 (optionally with FP8 layers), modelopt NVFP4, mxfp8)",
                        method));
  }
  if (hf_quant_config) {
    // Both files are read by loaders; they must describe the same thing.
    QuantConfig legacy = from_modelopt({*hf_quant_config, hf_source, ""});
    if (legacy.scheme != out.scheme)
      fail("{}: says {} but {} says {}", hf_source, quant_scheme_name(legacy.scheme), source,
           quant_scheme_name(out.scheme));
  }
  out.raw = *qc;
  return out;
}

QuantConfig load_quant_config(const std::string& checkpoint_dir) {
  std::filesystem::path dir(checkpoint_dir);
  std::string config_path = (dir / "config.json").string();
  json config = read_json_file(config_path);
  std::optional<json> hf;
  std::filesystem::path hf_path = dir / "hf_quant_config.json";
  if (std::filesystem::exists(hf_path)) hf = read_json_file(hf_path.string());
  return detect_quantization(config, hf, config_path);
}

json quantization_config_json(QuantScheme scheme, const ModelConfig& model) {
  switch (scheme) {
    case QuantScheme::kNone:
      return nullptr;
    case QuantScheme::kFp8Block:
      return fp8_block_json(model);
    case QuantScheme::kFp8Channel:
      return fp8_channel_json(model, nullptr);
    case QuantScheme::kMxfp4:
      return quark_mxfp4_json(model, false);
    case QuantScheme::kNvfp4:
      return modelopt_nvfp4_json(model);
    case QuantScheme::kMxfp8:
      return mxfp8_json(model);
    case QuantScheme::kMxfp4Fp8Attn:
      return quark_mxfp4_json(model, true);
  }
  return nullptr;
}

json converted_fp8_config_json(const ModelConfig& model, const QuantConfig& source) {
  return fp8_channel_json(model, &source);
}

json hf_quant_config_json(const ModelConfig& model) {
  return {{"producer", {{"name", "modelopt"}, {"version", kModelOptVersion}}},
          {"quantization",
           {{"quant_algo", "NVFP4"},
            {"kv_cache_quant_algo", nullptr},
            {"group_size", 16},
            {"exclude_modules", modelopt_ignore(model)}}}};
}

}  // namespace minimax
