// AMD Quark MXFP4 (quant_method "quark"): packed E2M1 weights with an E8M0 scale per 32 inputs,
// optionally with layer_quant_config entries that store some Linears (attention) in FP8. Two
// rows, mxfp4 and mxfp4-fp8attn, share the reader (which tells them apart by those entries) and
// the layout rule; their writers differ by the FP8 attention entry.
#include "checkpoint/arch/architecture.h"
#include "checkpoint/name_patterns.h"
#include "checkpoint/quant/quant_scheme.h"

namespace minimax {

using nlohmann::json;

namespace {

// A layer_quant_config entry that stores Linears in FP8 (Quark "fp8_e4m3" weights, per channel or
// per tensor, as vLLM's QuarkW8A8Fp8 takes them). Other overrides are errors naming the entry.
QuarkFp8Layers quark_fp8_layers(const ConfigFields& entry, const std::string& pattern) {
  if (entry.has("weight") && entry.get("weight").is_array())
    entry.error("weight", "a list of weight specs is not supported");
  ConfigFields w = entry.child("weight");
  w.expect("dtype", "fp8_e4m3", "only FP8 per-layer overrides of an MXFP4 model are supported");
  const std::string wq = w.string("qscheme");
  if (wq != "per_channel" && wq != "per_tensor")
    w.error("qscheme", fmt::format("'{}' is not supported (per_channel or per_tensor)", wq));
  if (w.boolean_or("is_dynamic", false)) w.error("is_dynamic", "dynamic weights are not supported");
  if (wq == "per_channel" && w.has("ch_axis") && w.integer("ch_axis") != 0)
    w.error("ch_axis", "per-channel FP8 weights must be scaled per output row (ch_axis 0)");
  QuarkFp8Layers out{pattern, wq == "per_channel", false};
  if (entry.has("input_tensors")) {
    ConfigFields a = entry.child("input_tensors");
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

// A Quark QuantizationSpec with the fields MXFP4 and FP8 share; the others null.
json quark_spec(std::string_view dtype, bool dynamic, std::string_view qscheme, int ch_axis,
                std::string_view observer) {
  return json{{"dtype", dtype},
              {"is_dynamic", dynamic},
              {"qscheme", qscheme},
              {"ch_axis", ch_axis},
              {"group_size", nullptr},
              {"symmetric", nullptr},
              {"round_method", nullptr},
              {"scale_type", nullptr},
              {"scale_format", nullptr},
              {"scale_calculation_mode", nullptr},
              {"mx_element_dtype", nullptr},
              {"observer_cls", observer},
              {"is_scale_quant", false}};
}

json mxfp4_spec(bool dynamic) {
  json spec = quark_spec("fp4", dynamic, "per_group", -1, "PerBlockMXObserver");
  spec.update({{"group_size", 32},
               {"block_size", nullptr},
               {"round_method", "half_even"},
               {"scale_type", "float"},
               {"scale_format", "e8m0"},
               {"scale_calculation_mode", "even"}});
  return spec;
}

// Activations per token (ch_axis 1), weights per output row (ch_axis 0).
json fp8_spec(bool dynamic) {
  return quark_spec("fp8_e4m3", dynamic, "per_channel", dynamic ? 1 : 0,
                    "PerChannelMinMaxObserver");
}

// Quark's export; `fp8_attention` adds AMD's "ptpc_fp8" attention override (FP8 weights per
// output channel, dynamic per-token FP8 activations; vLLM's QuarkW8A8Fp8 with
// kFp8DynamicTokenSym) and leaves attention out of `exclude`.
json quark_json(const ModelConfig& model, bool fp8_attention) {
  // The architecture's Quark recipe (spec/formats.md §2.1).
  constexpr std::string_view kAttention = "*self_attn*";
  json exclude = json::array();
  for (std::string_view entry : model.architecture_record().quark_exclude)
    if (!fp8_attention || entry != kAttention) exclude.push_back(entry);
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
           {{"weight", mxfp4_spec(false)},
            {"input_tensors", mxfp4_spec(true)},
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

}  // namespace

QuantConfig read_quark(const ConfigFields& q) {
  QuantConfig out;
  out.scheme = QuantScheme::kMxfp4;
  ConfigFields global = q.child("global_quant_config");
  if (global.has("weight") && global.get("weight").is_array())
    global.error("weight", "a list of weight specs (Quark NVFP4 / mixed) is not supported");
  ConfigFields w = global.child("weight");
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
    ConfigFields layers = q.child("layer_quant_config");
    for (const auto& [pattern, spec] : layers.json().items()) {
      ConfigFields entry = layers.child(pattern);
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

json write_mxfp4(const ModelConfig& model) { return quark_json(model, false); }
json write_mxfp4_fp8_attn(const ModelConfig& model) { return quark_json(model, true); }

// Exclusion first, as vLLM checks it first; then the FP8 layer_quant_config entries.
LinearLayout quark_layout(const QuantConfig& q, const std::string& module) {
  if (any_entry_matches(q.ignore, module, matches_quark)) return LinearLayout::kBf16;
  if (const QuarkFp8Layers* fp8 = q.quark_fp8_layers_of(module))
    return fp8->per_channel ? LinearLayout::kQuarkFp8Channel : LinearLayout::kQuarkFp8Tensor;
  return LinearLayout::kMxfp4;
}

}  // namespace minimax
