// Real-width random checkpoints (`make-tiny --hf-config CONFIG.json --layers N`): the exact width,
// vocabulary, expert count, MSA settings and published tensor names of a released config.json,
// cut to its first N layers, written in any of the published layouts, sharded as the releases
// are. Tens of gigabytes are streamed to disk in bounded memory (random_weights.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/quant_config.h"

namespace minimax {

class ThreadPool;

// Hugging Face's default max_shard_size ("5GB"), which the MiniMax releases were saved with.
inline constexpr uint64_t kPublishedShardBytes = 5'000'000'000;

// `config` (a released config.json; `source` names it in errors) with only its first `layers`
// decoder layers: num_hidden_layers and every per-layer list (M2 attn_type_list / moe_layer_freq,
// M3 text_config.moe_layer_freq and sparse_attention_config.sparse_attention_freq /
// sparse_disable_index_value) cut to `layers` entries, so M3 at 4 layers keeps its 3 dense
// layers and one MoE + MSA layer. Error naming the field when `layers` is not in
// [1, num_hidden_layers] or a per-layer list is not one entry per layer.
nlohmann::json slice_hf_config(const nlohmann::json& config, int layers, const std::string& source);

// `config` stored as `scheme`: a config whose own quantization_config already is `scheme` keeps it
// verbatim (the release's own words); otherwise it is replaced by quantization_config_json()
// (removed for bf16).
nlohmann::json hf_config_for_scheme(const nlohmann::json& config, QuantScheme scheme,
                                    const std::string& source);

struct RandomCheckpointSummary {
  int shards = 0;
  uint64_t tensor_bytes = 0;  // sum of tensor data bytes (the index's total_size)
  size_t tensors = 0;
};

// Writes the weight shards (each at most `max_shard_bytes` of data unless one tensor is larger),
// model.safetensors.index.json, config.json (and ModelOpt's hf_quant_config.json for NVFP4) of
// `config` (quantized as its quantization_config says) into the existing directory `dir`. Values
// are random (random_weights.h), the same for the same seed; chunks are generated on `pool`.
// Shard files are written under temporary names and renamed when complete.
RandomCheckpointSummary write_random_checkpoint(const nlohmann::json& config,
                                                const std::string& dir, uint64_t seed,
                                                uint64_t max_shard_bytes, ThreadPool& pool);

}  // namespace minimax
