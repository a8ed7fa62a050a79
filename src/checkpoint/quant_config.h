// Which of the published weight layouts a checkpoint uses, read from config.json's
// `quantization_config` (and ModelOpt's hf_quant_config.json), how each Linear is stored under it,
// and the exact config each release writes.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
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
  kMxfp8,       // official MiniMax-M3 MXFP8: F8_E4M3 + U8 E8M0 weight_scale_inv per 32 inputs
  kMxfp4Fp8Attn,  // AMD Quark MXFP4 whose layer_quant_config stores attention in FP8
};

// How one Linear weight is stored. Every scheme stores its quantized Linears one way, except
// kMxfp4Fp8Attn: MXFP4, and FP8 where a layer_quant_config pattern matches.
enum class LinearLayout {
  kBf16,             // not quantized: one tensor in its release dtype
  kFp8Block,         // weight F8_E4M3 + weight_scale_inv F32 [ceil(out/bn), ceil(in/bk)]
  kFp8Channel,       // weight F8_E4M3 + weight_scale F32 [out, 1] (compressed-tensors)
  kQuarkFp8Channel,  // weight F8_E4M3 + weight_scale F32 [out] (Quark per_channel, ch_axis 0)
  kQuarkFp8Tensor,   // weight F8_E4M3 + weight_scale F32 [] (Quark per_tensor)
  kMxfp4,            // weight U8 [out, in/2] + weight_scale U8 [out, in/32]
  kMxfp8,            // weight F8_E4M3 [out, in] + weight_scale_inv U8 [out, in/32] (E8M0)
  kNvfp4,            // weight U8 + weight_scale F8_E4M3 + weight_scale_2 F32 + input_scale F32
};
std::string_view linear_layout_name(LinearLayout layout);  // "bf16", "fp8-block", ...

// A Quark layer_quant_config entry that stores the Linears it matches in FP8.
struct QuarkFp8Layers {
  std::string pattern;        // "*self_attn*": fnmatch when it has a '*', else the exact name
  bool per_channel = true;    // weight qscheme per_channel (else per_tensor)
  bool static_input = false;  // input_tensors static per_tensor: an input_scale F32 [] is stored
};

std::string_view quant_scheme_name(QuantScheme scheme);  // "bf16", "fp8-block", ...
std::optional<QuantScheme> parse_quant_scheme_name(std::string_view name);
std::span<const QuantScheme> all_quant_schemes();  // every scheme, kNone first

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
  std::vector<QuarkFp8Layers> fp8_layers;  // kMxfp4Fp8Attn: the FP8 layer_quant_config entries
  nlohmann::json raw;  // the quantization config object as read (null for kNone)

  // How the Linear module `module_name` (e.g. "model.layers.0.self_attn.q_proj"; a trailing
  // ".weight" is ignored) is stored, by this scheme's own ignore-list rule (name_patterns.h) and,
  // for Quark, its layer_quant_config (exclusion first, as vLLM checks it first). kBf16 for kNone.
  LinearLayout layout_of(const std::string& module_name) const;
  bool is_quantized(const std::string& module_name) const {
    return layout_of(module_name) != LinearLayout::kBf16;
  }
  // The FP8 layer_quant_config entry that matches the module (first match), or null.
  const QuarkFp8Layers* quark_fp8_layers_of(const std::string& module_name) const;
};

// `config` is the parsed config.json; `hf_quant_config` the parsed hf_quant_config.json if the
// checkpoint has one (legacy ModelOpt). Unsupported methods or variants (per-tensor FP8 without
// Quark, NVFP4 via compressed-tensors, ModelOpt MXFP8, Quark per-layer overrides other than FP8,
// ...) throw Error naming `source` and the field.
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
//  - kMxfp8: MiniMaxAI/MiniMax-M3-MXFP8's config (quant_method "mxfp8", weight_block_size [1, 32],
//    dynamic activations, ignored_layers lm_head / embed_tokens / vision; docs/checkpoint.md).
//  - kMxfp4Fp8Attn: kMxfp4's Quark export with layer_quant_config {"*self_attn*": FP8 per-channel
//    weights, dynamic per-token FP8 activations} (AMD's "ptpc_fp8" attention) and the
//    architecture's exclude list without its attention entry.
nlohmann::json quantization_config_json(QuantScheme scheme, const ModelConfig& model);
// `config` (a config.json) with its quantization_config replaced by `quant` where it has one (top
// level, or text_config's for a multimodal config that keeps it there), else set at the top level;
// a null `quant` removes it (BF16).
nlohmann::json with_quantization_config(nlohmann::json config, const nlohmann::json& quant);
// Adds `modules` (exact module names) to the list in which `scheme`'s written config names the
// modules it leaves unquantized: fp8-block `modules_to_not_convert`, compressed-tensors `ignore`,
// Quark `exclude`, ModelOpt `ignore` (and `exclude_modules` of its legacy hf_quant_config.json),
// MXFP8 `ignored_layers`.
void add_unquantized_modules(QuantScheme scheme, nlohmann::json& quantization_config,
                             std::optional<nlohmann::json>& hf_quant_config,
                             const std::vector<std::string>& modules);
// Removes the entries equal to one of `modules` from that list (an entry that names more than one
// module, a glob or a regex, stays).
void remove_unquantized_modules(QuantScheme scheme, nlohmann::json& quantization_config,
                                std::optional<nlohmann::json>& hf_quant_config,
                                const std::vector<std::string>& modules);
// What `minimax convert` writes for the Quark `source`: kFp8Channel's config, with the Linears the
// source stores as per-channel FP8 (kMxfp4Fp8Attn's attention, copied as they are) left out of
// `ignore`, so that a loader reads them as FP8 too.
nlohmann::json converted_fp8_config_json(const ModelConfig& model, const QuantConfig& source);
// ModelOpt's legacy hf_quant_config.json (a file of its own beside config.json) for NVFP4.
nlohmann::json hf_quant_config_json(const ModelConfig& model);

}  // namespace minimax
