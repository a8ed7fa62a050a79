// MiniMaxAI/MiniMax-M3-MXFP8 (quant_method "mxfp8"): F8_E4M3 weights with a U8 E8M0
// weight_scale_inv per 32 inputs and dynamic activations. vLLM reads it as ModelOpt MXFP8 (its
// ignored_layers becoming exclude_modules) with the checkpoint's weight_scale_inv renamed
// weight_scale; TensorRT-LLM asserts the [1, 32] block (docs/checkpoint.md).
#include "checkpoint/arch/architecture.h"
#include "checkpoint/name_patterns.h"
#include "checkpoint/quant/quant_scheme.h"

namespace minimax {

using nlohmann::json;

// {"quant_method": "mxfp8", "activation_scheme": "dynamic", "weight_block_size": [1, 32],
// "ignored_layers": [...]}.
QuantConfig read_mxfp8(const ConfigFields& q) {
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

// The published config, ignored_layers from the architecture record.
json write_mxfp8(const ModelConfig& model) {
  json ignored = json::array();
  for (std::string_view entry : model.architecture_record().mxfp8_ignored_layers)
    ignored.push_back(entry);
  return {{"quant_method", "mxfp8"},
          {"activation_scheme", "dynamic"},
          {"weight_block_size", {1, 32}},
          {"ignored_layers", ignored}};
}

}  // namespace minimax
