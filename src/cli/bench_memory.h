// `minimax bench`'s memory report: peak resident memory against the bound a deployment can plan
// with, mapped weight bytes + KV pool + 1 GiB of working memory, with weights repacked at load
// (owned copies: converted scales, dequantized experts) added and reported separately.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "model/model.h"

namespace minimax::cli {

inline constexpr uint64_t kWorkingMemoryAllowance = uint64_t{1} << 30;

class BenchMemory {
 public:
  // Call right after loading: records the load's peak.
  explicit BenchMemory(const Model& model);
  // Call once the bandwidth test's buffers are freed: restarts the high-water mark so that their
  // gigabyte does not count as the model's (where the kernel refuses, the peak includes it and the
  // report says so).
  void exclude_bandwidth_test();
  // A KV cache of `bytes` was allocated by one of the runs (they run one after another).
  void saw_kv_pool(uint64_t bytes) { kv_pool_bytes_ = std::max(kv_pool_bytes_, bytes); }
  // Reads the final peak; the "memory" object of bench --json.
  nlohmann::ordered_json report() const;

 private:
  uint64_t load_peak_ = 0, mapped_ = 0, repacked_ = 0, kv_pool_bytes_ = 0, huge_page_weights_ = 0;
  bool reset_ = false;
};

// Bytes of a single-sequence KV cache of `capacity` slots (Model::new_cache, ModelSession).
uint64_t single_sequence_kv_bytes(const ModelConfig& config, int64_t capacity, KvDtype dtype);

}  // namespace minimax::cli
