// validate: the converted config.json, read with the validator's own rules for compressed-tensors
// (exact names and "re:" patterns matched at the start, as compressed-tensors' match_name does).
#include <fmt/format.h>

#include <regex>
#include <set>

#include "checkpoint/validate.h"
#include "checkpoint/validate_reader.h"

namespace minimax {
namespace {

using nlohmann::json;

// quantization_config lives at the top level, or in text_config for some multimodal configs.
const json* quantization_config(const json& config) {
  if (config.contains("quantization_config")) return &config["quantization_config"];
  if (config.contains("text_config") && config["text_config"].is_object() &&
      config["text_config"].contains("quantization_config"))
    return &config["text_config"]["quantization_config"];
  return nullptr;
}

json without_quantization(json config) {
  config.erase("quantization_config");
  if (config.contains("text_config") && config["text_config"].is_object())
    config["text_config"].erase("quantization_config");
  return config;
}

bool matches_entry(const std::string& entry, const std::string& module) {
  if (entry.rfind("re:", 0) == 0) {
    try {
      return std::regex_search(module, std::regex(entry.substr(3)),
                               std::regex_constants::match_continuous);
    } catch (const std::regex_error&) {
      return false;
    }
  }
  return entry == module;
}

// The modules of a MiniMax checkpoint that are nn.Linear in the model (names' last component).
bool is_linear_module(const std::string& module) {
  static const std::set<std::string> kLinear = {
      "q_proj", "k_proj",  "v_proj",       "o_proj",       "gate_proj", "up_proj", "down_proj",
      "gate",   "lm_head", "index_q_proj", "index_k_proj", "w1",        "w2",      "w3"};
  const size_t dot = module.rfind('.');
  return kLinear.count(dot == std::string::npos ? module : module.substr(dot + 1)) > 0;
}

void expect_field(const json& object, const std::string& where, const char* key, const json& wanted,
                  ValidateReport& report) {
  if (!object.is_object() || !object.contains(key) || object[key] != wanted)
    report.fail(
        fmt::format("config.json: {}.{} should be {}, is {}", where, key, wanted.dump(),
                    object.is_object() && object.contains(key) ? object[key].dump() : "missing"));
}

}  // namespace

ValidationWindow validation_window(const std::string& target) {
  return target == "gaudi2" ? ValidationWindow{-6, 7} : ValidationWindow{-5, 8};
}

void check_converted_config(const json& source_config, const CheckedCheckpoint& converted,
                            ValidateReport& report) {
  const json& config = converted.config();
  report.target = "ocp";
  if (without_quantization(config) != without_quantization(source_config))
    report.fail("config.json: differs from the source's config.json outside quantization_config");
  const json* q = quantization_config(config);
  if (q == nullptr || !q->is_object()) {
    report.fail("config.json: no quantization_config object");
    return;
  }
  expect_field(*q, "quantization_config", "quant_method", "compressed-tensors", report);
  expect_field(*q, "quantization_config", "format", "float-quantized", report);
  expect_field(*q, "quantization_config", "quantization_status", "compressed", report);
  if (q->contains("fp8_dtype_flavor")) {
    if ((*q)["fp8_dtype_flavor"] == "float8_e4m3fnuz")
      report.target = "gaudi2";
    else
      report.fail(fmt::format("config.json: unexpected fp8_dtype_flavor {}",
                              (*q)["fp8_dtype_flavor"].dump()));
  }
  std::vector<std::string> targets, ignore;
  if (!q->contains("config_groups") || !(*q)["config_groups"].is_object() ||
      (*q)["config_groups"].empty()) {
    report.fail("config.json: quantization_config.config_groups is missing or empty");
  } else {
    for (const auto& [name, group] : (*q)["config_groups"].items()) {
      const std::string where = "quantization_config.config_groups." + name;
      const json weights =
          group.is_object() && group.contains("weights") ? group["weights"] : json();
      const json inputs = group.is_object() && group.contains("input_activations")
                              ? group["input_activations"]
                              : json();
      expect_field(weights, where + ".weights", "num_bits", 8, report);
      expect_field(weights, where + ".weights", "type", "float", report);
      expect_field(weights, where + ".weights", "strategy", "channel", report);
      expect_field(weights, where + ".weights", "symmetric", true, report);
      expect_field(weights, where + ".weights", "dynamic", false, report);
      expect_field(inputs, where + ".input_activations", "num_bits", 8, report);
      expect_field(inputs, where + ".input_activations", "type", "float", report);
      expect_field(inputs, where + ".input_activations", "strategy", "token", report);
      expect_field(inputs, where + ".input_activations", "dynamic", true, report);
      if (group.is_object() && group.contains("targets") && group["targets"].is_array())
        for (const json& t : group["targets"])
          if (t.is_string()) targets.push_back(t.get<std::string>());
    }
  }
  if (!q->contains("ignore") || !(*q)["ignore"].is_array()) {
    report.fail("config.json: quantization_config.ignore is missing");
  } else {
    for (const json& entry : (*q)["ignore"])
      if (entry.is_string()) ignore.push_back(entry.get<std::string>());
  }
  auto matches_any = [](const std::vector<std::string>& entries, const std::string& module) {
    for (const std::string& e : entries)
      if (e == "Linear" || matches_entry(e, module)) return true;
    return false;
  };
  for (const auto& [name, t] : converted.tensors()) {
    constexpr std::string_view kWeight = ".weight";
    if (name.size() <= kWeight.size() ||
        name.compare(name.size() - kWeight.size(), kWeight.size(), kWeight) != 0 ||
        t.shape.size() != 2)
      continue;
    const std::string module = name.substr(0, name.size() - kWeight.size());
    const bool fp8 = t.dtype == "F8_E4M3";
    if (!fp8 && !is_linear_module(module)) continue;
    bool ignored = false;
    for (const std::string& e : ignore) ignored = ignored || matches_entry(e, module);
    const bool targeted = matches_any(targets, module) && !ignored;
    if (fp8 && !targeted)
      report.fail(
          fmt::format("config.json: FP8 module '{}' is not targeted (or is ignored), so a "
                      "loader would read its FP8 bytes as unquantized",
                      module));
    if (!fp8 && targeted)
      report.fail(
          fmt::format("config.json: {} Linear '{}' is not in ignore, so a loader would "
                      "expect FP8 + weight_scale for it",
                      t.dtype, module));
  }
}

}  // namespace minimax
