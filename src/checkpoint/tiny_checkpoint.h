// Deterministic random BF16 checkpoints with the real M2 / M3 architecture at tiny size: test
// fixtures for every loader, converter and model test. Same seed, same bytes.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/model_config.h"

namespace minimax {

// Writes config.json, the weight shards (at least `min_shards`) and model.safetensors.index.json
// for `config` into the existing directory `dir`. Values: linear weights ~ N(0, 1/in), embeddings
// ~ N(0, 1), norms near their identity (1 for M2, 0 for M3's zero-centred Gemma norms), router
// bias ~ N(0, 0.1) so that selection and weighting differ. `show_progress`: a bar on stderr.
void write_tiny_weights(const ModelConfig& config, const std::string& dir, uint64_t seed,
                        int min_shards = 2, bool show_progress = false);

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
