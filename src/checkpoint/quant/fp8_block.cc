// The official MiniMax block FP8 scheme (quant_method "fp8"): F8_E4M3 weights with an F32
// weight_scale_inv per 128x128 block; router, bias and lm_head unquantized.
#include "checkpoint/arch/architecture.h"
#include "checkpoint/name_patterns.h"
#include "checkpoint/quant/quant_scheme.h"

namespace minimax {

using nlohmann::json;

QuantConfig read_fp8_block(const ConfigFields& q) {
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

// The release's config; M3 also leaves the vision modules out.
json write_fp8_block(const ModelConfig& model) {
  json not_convert = {"gate", "e_score_correction_bias", "lm_head"};
  for (std::string_view vision : model.architecture_record().vision_modules)
    not_convert.push_back(vision);
  return {{"activation_scheme", "dynamic"},
          {"fmt", "float8_e4m3fn"},
          {"quant_method", "fp8"},
          {"weight_block_size", {128, 128}},
          {"modules_to_not_convert", not_convert}};
}

}  // namespace minimax
