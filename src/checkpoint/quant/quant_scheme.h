// The quantization schemes as rows: each scheme's reader (its `quantization_config`, on
// ConfigFields), writer (what a release of it writes) and Linear layout rule side by side in one
// row of quant_config.cc's table, the reader and writer in one file of this folder per format
// (fp8_block.cc, fp8_channel.cc, quark_mxfp4.cc, modelopt_nvfp4.cc, mxfp8.cc). quant_config.cc
// dispatches on the rows and holds no scheme-specific rule.
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/config_fields.h"
#include "checkpoint/quant_config.h"

namespace minimax {

struct QuantSchemeRow {
  QuantScheme scheme = QuantScheme::kNone;
  std::string_view name;  // "fp8-block": the CLI's --format and messages
  // The config.json `quant_method` the reader takes ("fp8", "quark", ...; empty for BF16), and
  // how the supported-methods message says it (empty where another row's reader is the same).
  std::string_view quant_method;
  std::string_view method_description;
  // Reads a quantization_config whose quant_method is the row's; errors name the file and field.
  // It may return a sibling scheme (Quark's reader: MXFP4, or MXFP4 with FP8 layers).
  QuantConfig (*read)(const ConfigFields& q) = nullptr;
  // The quantization_config a release of the scheme writes (null for BF16).
  nlohmann::json (*write)(const ModelConfig& model) = nullptr;
  // The field of the written config that lists the modules left unquantized, where
  // add_unquantized_modules adds more ("modules_to_not_convert", "ignore", "exclude", ...).
  std::string_view exclude_field;
  // How it stores a Linear: as `quantized`, unless an entry of the config's ignore list matches
  // the module by `ignored` (name_patterns.h); or, where `layout` is set, by that rule alone
  // (module without its ".weight").
  LinearLayout quantized = LinearLayout::kBf16;
  bool (*ignored)(const std::string& entry, const std::string& module) = nullptr;
  LinearLayout (*layout)(const QuantConfig& config, const std::string& module) = nullptr;
};

// Every row, in all_quant_schemes() order (kNone first).
std::span<const QuantSchemeRow> quant_scheme_rows();
const QuantSchemeRow& quant_scheme_row(QuantScheme scheme);

// Whether any entry of an ignore / targets list matches `module` by `matches`.
bool any_entry_matches(const std::vector<std::string>& entries, const std::string& module,
                       bool (*matches)(const std::string& entry, const std::string& module));

// fp8_block.cc: the official MiniMax block FP8 (quant_method "fp8").
QuantConfig read_fp8_block(const ConfigFields& q);
nlohmann::json write_fp8_block(const ModelConfig& model);
// fp8_channel.cc: compressed-tensors FP8 (quant_method "compressed-tensors").
QuantConfig read_fp8_channel(const ConfigFields& q);
nlohmann::json write_fp8_channel(const ModelConfig& model);
LinearLayout fp8_channel_layout(const QuantConfig& config, const std::string& module);
// quark_mxfp4.cc: AMD Quark MXFP4, with or without FP8 layers (quant_method "quark").
QuantConfig read_quark(const ConfigFields& q);
nlohmann::json write_mxfp4(const ModelConfig& model);
nlohmann::json write_mxfp4_fp8_attn(const ModelConfig& model);
LinearLayout quark_layout(const QuantConfig& config, const std::string& module);
// modelopt_nvfp4.cc: ModelOpt NVFP4 (quant_method "modelopt", or hf_quant_config.json).
QuantConfig read_modelopt(const ConfigFields& q);
nlohmann::json write_modelopt(const ModelConfig& model);
// mxfp8.cc: MiniMax-M3-MXFP8 (quant_method "mxfp8").
QuantConfig read_mxfp8(const ConfigFields& q);
nlohmann::json write_mxfp8(const ModelConfig& model);

}  // namespace minimax
