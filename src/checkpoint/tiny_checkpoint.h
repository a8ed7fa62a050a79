// Deterministic random BF16 checkpoints with the real M2 / M3 architecture at tiny size: test
// fixtures for every loader, converter and model test. Same seed, same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/model_config.h"
#include "checkpoint/tensor_table.h"

namespace minimax {

// Writes config.json, the weight shards (at least `min_shards`) and model.safetensors.index.json
// for `config` into the existing directory `dir`. Values: linear weights ~ N(0, 1/in), embeddings
// ~ N(0, 1), norms near their identity (1 for M2, 0 for M3's zero-centred Gemma norms), router
// bias ~ N(0, 0.1) so that selection and weighting differ. `mtp_layers` (at most the config's
// num_mtp_modules) adds that many multi-token-prediction modules, which the engine skips but
// converters must carry: see mtp_tensor_specs. `show_progress`: a bar on stderr.
void write_tiny_weights(const ModelConfig& config, const std::string& dir, uint64_t seed,
                        int min_shards = 2, int mtp_layers = 0, bool show_progress = false);

// The tensors of `count` MTP modules, named as the releases name them (spec/model.md §3.3 and
// §5): M2 numbers them after the main layers (model.layers.N, N+1, ...), M3 keeps them under
// language_model.model.mtp.layers.i. Each is the last decoder layer's tensors (attention, router,
// experts...) plus the enorm, hnorm and eh_proj [hidden, 2 x hidden] of the prediction head.
std::vector<TensorSpec> mtp_tensor_specs(const ModelConfig& config, int count);

// Deterministic N(0,1) stream keyed by (seed, tensor name): the same tensor gets the same values
// whatever else the table holds.
class NormalStream {
 public:
  NormalStream(uint64_t seed, const std::string& key);
  double next();

 private:
  uint64_t next_u64();
  uint64_t state_;
  bool has_spare_ = false;
  double spare_ = 0;
};

}  // namespace minimax
