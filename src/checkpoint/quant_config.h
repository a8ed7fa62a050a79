// Which of the five published weight layouts a checkpoint uses, read from config.json's
// `quantization_config` (and ModelOpt's hf_quant_config.json), and the exact config each writes.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/model_config.h"

namespace minimax {

enum class QuantScheme {
  kNone,        // BF16 weights
  kFp8Block,    // official MiniMax FP8: F8_E4M3 weight + F32 weight_scale_inv per 128x128 block
  kFp8Channel,  // compressed-tensors float-quantized: per-row weight_scale, dynamic per-token acts
  kMxfp4,       // AMD Quark: packed E2M1 + E8M0 scale per 32 inputs
  kNvfp4,       // NVIDIA ModelOpt: packed E2M1 + E4M3 scale per 16 inputs + F32 global scale
};

std::string_view quant_scheme_name(QuantScheme scheme);  // "bf16", "fp8-block", ...
std::optional<QuantScheme> parse_quant_scheme_name(std::string_view name);

struct QuantConfig {
  QuantScheme scheme = QuantScheme::kNone;
  std::vector<std::string> ignore;  // as written: modules_to_not_convert / ignore / exclude
  // compressed-tensors `targets` of the config groups ("Linear" = every Linear). Other schemes
  // quantize every Linear that `ignore` does not name.
  std::vector<std::string> targets;
  int block_n = 128, block_k = 128;  // kFp8Block weight_block_size
  int group_size = 0;                // kMxfp4 32, kNvfp4 16
  bool dynamic_activations = true;   // activations quantized on the fly (no stored input_scale)
  std::string fp8_flavor;            // compressed-tensors "fp8_dtype_flavor" (Gaudi), else empty
  nlohmann::json raw;                // the quantization config object as read (null for kNone)

  // Whether the Linear module `module_name` (e.g. "model.layers.0.self_attn.q_proj"; a trailing
  // ".weight" is ignored) is stored quantized, by this scheme's own ignore-list rule
  // (name_patterns.h). Always false for kNone.
  bool is_quantized(const std::string& module_name) const;
};

// `config` is the parsed config.json; `hf_quant_config` the parsed hf_quant_config.json if the
// checkpoint has one (legacy ModelOpt). Unsupported methods or variants (static activations,
// per-tensor FP8, NVFP4 via compressed-tensors, MXFP8, per-layer overrides, ...) throw Error naming
// `source` and the field.
QuantConfig detect_quantization(const nlohmann::json& config,
                                const std::optional<nlohmann::json>& hf_quant_config,
                                const std::string& source);
// Reads DIR/config.json and, if present, DIR/hf_quant_config.json.
QuantConfig load_quant_config(const std::string& checkpoint_dir);

// The `quantization_config` object a release of `scheme` writes into config.json (null for kNone):
//  - kFp8Block: the official MiniMax FP8 block config (router, bias, lm_head unquantized; M3 also
//    leaves the vision modules out).
//  - kFp8Channel: compressed-tensors FP8_DYNAMIC (channel weights, dynamic per-token activations);
//    `ignore` names every Linear that is not a routed expert, plus regexes for the vision modules.
//  - kMxfp4: AMD Quark export with its `export` section; `exclude` as amd/MiniMax-* (M2: Quark's
//    minimax_m2 template; M3: the amd/MiniMax-M3-MXFP4 recipe globs).
//  - kNvfp4: ModelOpt >= 0.39 writes this into config.json (quant_method "modelopt"); see
//    hf_quant_config_json for the legacy file it also writes.
nlohmann::json quantization_config_json(QuantScheme scheme, const ModelConfig& model);
// ModelOpt's legacy hf_quant_config.json (a file of its own beside config.json) for NVFP4.
nlohmann::json hf_quant_config_json(const ModelConfig& model);

}  // namespace minimax
