// The memory arithmetic of a model in a weight layout, computed from its config alone (no weights
// read): the bytes each rank holds, the bytes one decoded token reads, and the KV bytes per token
// at each cache type. The one place `inspect`, `serve --dry-run`, the layout guide
// (docs/layouts.md) and the recipes' sizing come from. Counted from the tensor table and the
// layout's stored tensors (checkpoint/tensor_table.h), so a new tensor or layout is counted
// without touching this file.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/model_config.h"
#include "checkpoint/quant_config.h"
#include "kernels/ops.h"
#include "parallel/parallel_mode.h"

namespace minimax {

struct WeightFootprint {
  uint64_t held = 0;       // bytes this rank holds (scales included): what it maps or loads
  uint64_t per_token = 0;  // bytes one decoded token reads on this rank (its share of the top-k
                           // experts, one embedding row): decode's roofline
};

// The weights of `config` stored as `quant`, as rank `plan.rank` of `plan` holds them: a tensor
// split by rows or columns is 1/ranks of it (the KV projections: the rank's KV heads, copies
// included), a routed expert is whole on the rank that holds it, the rest whole on every rank.
// Only the tensors the engine loads count (no MTP or vision tower).
WeightFootprint weight_footprint(const ModelConfig& config, const QuantConfig& quant,
                                 const ParallelPlan& plan);

// KV cache bytes one token takes on rank `plan.rank` at `dtype`: every layer's K and V of the
// rank's KV heads, and M3's MSA index keys (KvBlockPool::bytes_per_block of the rank's config).
int64_t kv_bytes_per_token(const ModelConfig& config, const ParallelPlan& plan, KvDtype dtype);

// The QuantConfig a checkpoint of the released `hf_config` (`source` names it in errors) would
// have in layout `scheme`: its own quantization_config when it already is `scheme`, else the
// config that layout's release writes (quantization_config_json).
QuantConfig quant_config_for_layout(const nlohmann::json& hf_config, QuantScheme scheme,
                                    const std::string& source);

}  // namespace minimax
