// NVIDIA ModelOpt NVFP4 (quant_method "modelopt", or the legacy hf_quant_config.json beside
// config.json): packed E2M1 weights, an E4M3 scale per 16 inputs and an F32 global scale.
#include <algorithm>
#include <cctype>

#include "checkpoint/arch/architecture.h"
#include "checkpoint/name_patterns.h"
#include "checkpoint/quant/quant_scheme.h"
#include "checkpoint/tensor_table.h"

namespace minimax {

using nlohmann::json;

namespace {

constexpr const char* kModelOptVersion = "0.39.0";

std::string upper(std::string text) {
  for (char& ch : text) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return text;
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

}  // namespace

// The config.json style ({"quant_method": "modelopt", "quant_algo": ..., "ignore"}) or the legacy
// hf_quant_config.json ({"quantization": {"quant_algo", "exclude_modules", ...}}).
QuantConfig read_modelopt(const ConfigFields& q) {
  if (q.has("quantization")) return read_modelopt(q.child("quantization"));
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

// ModelOpt >= 0.39 writes this into config.json; hf_quant_config_json is the legacy file it also
// writes.
json write_modelopt(const ModelConfig& model) {
  json args = {{"dynamic", false}, {"num_bits", 4}, {"type", "float"}, {"group_size", 16}};
  return {
      {"config_groups",
       {{"group_0", {{"input_activations", args}, {"weights", args}, {"targets", {"Linear"}}}}}},
      {"ignore", modelopt_ignore(model)},
      {"quant_algo", "NVFP4"},
      {"producer", {{"name", "modelopt"}, {"version", kModelOptVersion}}},
      {"quant_method", "modelopt"}};
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
