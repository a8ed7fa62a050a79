// Quantization detection from config.json / hf_quant_config.json and the scheme rows: every
// scheme-specific rule is its row's reader, writer or layout rule
// (checkpoint/quant/quant_scheme.h).
#include "checkpoint/quant_config.h"

#include <array>
#include <filesystem>
#include <set>
#include <span>

#include "base/error.h"
#include "checkpoint/name_patterns.h"
#include "checkpoint/quant/quant_scheme.h"

namespace minimax {
namespace {

using nlohmann::json;

nlohmann::json write_nothing(const ModelConfig&) { return nullptr; }

// One row per scheme; adding one is a QuantScheme value, a row, and its reader and writer in
// checkpoint/quant/. Row order is all_quant_schemes()'s.
// clang-format off
// scheme, name, quant_method, method description, reader, writer, the list of unquantized
//   modules, quantized layout, ignore-list rule, layout rule (instead of the two before)
constexpr QuantSchemeRow kSchemes[] = {
  {QuantScheme::kNone, "bf16", "", "", nullptr, write_nothing, ""},
  {QuantScheme::kFp8Block, "fp8-block", "fp8", "fp8 block", read_fp8_block, write_fp8_block,
    "modules_to_not_convert", LinearLayout::kFp8Block, matches_modules_to_not_convert},
  {QuantScheme::kFp8Channel, "fp8-channel", "compressed-tensors", "compressed-tensors FP8",
    read_fp8_channel, write_fp8_channel, "ignore", LinearLayout::kFp8Channel, nullptr,
    fp8_channel_layout},
  {QuantScheme::kMxfp4, "mxfp4", "quark", "quark MXFP4 (optionally with FP8 layers)", read_quark,
    write_mxfp4, "exclude", LinearLayout::kMxfp4, nullptr, quark_layout},
  {QuantScheme::kNvfp4, "nvfp4", "modelopt", "modelopt NVFP4", read_modelopt, write_modelopt,
    "ignore", LinearLayout::kNvfp4, matches_modelopt},
  // vLLM matches MXFP8's ignored_layers as ModelOpt exclude_modules.
  {QuantScheme::kMxfp8, "mxfp8", "mxfp8", "mxfp8", read_mxfp8, write_mxfp8, "ignored_layers",
    LinearLayout::kMxfp8, matches_modelopt},
  // Read by the mxfp4 row's reader, which returns this scheme when FP8 layers are configured.
  {QuantScheme::kMxfp4Fp8Attn, "mxfp4-fp8attn", "quark", "", read_quark, write_mxfp4_fp8_attn,
    "exclude", LinearLayout::kMxfp4, nullptr, quark_layout},
};
// clang-format on

// The row whose reader takes `method`; Error naming the field and the supported methods.
const QuantSchemeRow& row_of_method(const std::string& method, const ConfigFields& q) {
  std::string supported;
  for (const QuantSchemeRow& r : kSchemes) {
    if (!r.quant_method.empty() && r.quant_method == method) return r;
    if (!r.method_description.empty())
      supported += (supported.empty() ? "" : ", ") + std::string(r.method_description);
  }
  q.error("quant_method", fmt::format("'{}' is not supported (supported: {})", method, supported));
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

}  // namespace

std::span<const QuantSchemeRow> quant_scheme_rows() { return kSchemes; }

const QuantSchemeRow& quant_scheme_row(QuantScheme scheme) {
  for (const QuantSchemeRow& r : kSchemes)
    if (r.scheme == scheme) return r;
  fail("quant_scheme_row: no row of scheme {}", static_cast<int>(scheme));
}

bool any_entry_matches(const std::vector<std::string>& entries, const std::string& module,
                       bool (*matches)(const std::string& entry, const std::string& module)) {
  for (const std::string& entry : entries)
    if (matches(entry, module)) return true;
  return false;
}

std::string_view quant_scheme_name(QuantScheme scheme) { return quant_scheme_row(scheme).name; }

std::optional<QuantScheme> parse_quant_scheme_name(std::string_view name) {
  for (const QuantSchemeRow& r : kSchemes)
    if (r.name == name) return r.scheme;
  return std::nullopt;
}

std::span<const QuantScheme> all_quant_schemes() {
  static const std::vector<QuantScheme> all = [] {
    std::vector<QuantScheme> out;
    for (const QuantSchemeRow& r : kSchemes) out.push_back(r.scheme);
    return out;
  }();
  return all;
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
  const QuantSchemeRow& row = quant_scheme_row(scheme);
  const std::string module = strip_weight_suffix(name);
  if (row.layout != nullptr) return row.layout(*this, module);
  if (row.ignored != nullptr && any_entry_matches(ignore, module, row.ignored))
    return LinearLayout::kBf16;
  return row.quantized;
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
  // ModelOpt's legacy file is read by the NVFP4 reader.
  auto read_legacy = [&] { return read_modelopt(ConfigFields(*hf_quant_config, "", hf_source)); };
  if (!qc) {
    if (!hf_quant_config) return QuantConfig{};  // BF16
    QuantConfig out = read_legacy();
    out.raw = *hf_quant_config;
    return out;
  }
  if (!qc->is_object()) fail("{}: field '{}': must be an object", source, where);
  const ConfigFields q(*qc, where, source);
  QuantConfig out = row_of_method(q.string("quant_method"), q).read(q);
  if (hf_quant_config) {
    // Both files are read by loaders; they must describe the same thing.
    QuantConfig legacy = read_legacy();
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
  return quant_scheme_row(scheme).write(model);
}

json with_quantization_config(json config, const json& quant) {
  auto text = config.find("text_config");
  const bool in_text_config = !config.contains("quantization_config") && text != config.end() &&
                              text->is_object() && text->contains("quantization_config");
  json& holder = in_text_config ? *text : config;
  if (quant.is_null()) {
    holder.erase("quantization_config");
  } else {
    holder["quantization_config"] = quant;
  }
  return config;
}

void add_unquantized_modules(QuantScheme scheme, json& quantization_config,
                             std::optional<json>& hf_quant_config,
                             const std::vector<std::string>& modules) {
  if (modules.empty()) return;
  const std::string field(quant_scheme_row(scheme).exclude_field);
  if (field.empty() || !quantization_config.is_object())
    fail("add_unquantized_modules: {} has no list of unquantized modules",
         quant_scheme_name(scheme));
  json& list = quantization_config[field];
  if (!list.is_array()) list = json::array();
  for (const std::string& module : modules) list.push_back(module);
  // ModelOpt's legacy file names them too: loaders read either.
  if (hf_quant_config && hf_quant_config->contains("quantization")) {
    json& legacy = (*hf_quant_config)["quantization"]["exclude_modules"];
    if (!legacy.is_array()) legacy = json::array();
    for (const std::string& module : modules) legacy.push_back(module);
  }
}

void remove_unquantized_modules(QuantScheme scheme, json& quantization_config,
                                std::optional<json>& hf_quant_config,
                                const std::vector<std::string>& modules) {
  if (modules.empty()) return;
  const std::set<std::string> doomed(modules.begin(), modules.end());
  auto remove_from = [&](json& list) {
    if (!list.is_array()) return;
    json kept = json::array();
    for (const json& entry : list)
      if (!entry.is_string() || !doomed.count(entry.get<std::string>())) kept.push_back(entry);
    list = std::move(kept);
  };
  const std::string field(quant_scheme_row(scheme).exclude_field);
  if (!field.empty() && quantization_config.is_object() && quantization_config.contains(field))
    remove_from(quantization_config[field]);
  if (hf_quant_config && hf_quant_config->contains("quantization") &&
      (*hf_quant_config)["quantization"].contains("exclude_modules"))
    remove_from((*hf_quant_config)["quantization"]["exclude_modules"]);
}

}  // namespace minimax
