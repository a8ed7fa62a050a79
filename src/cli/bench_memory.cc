// Peak resident memory of a bench run against mapped weights + KV pool + 1 GiB.
#include "cli/bench_memory.h"

#include <algorithm>

#include "base/huge_pages.h"
#include "base/process_memory.h"
#include "model/kv_cache.h"

namespace minimax::cli {

BenchMemory::BenchMemory(const Model& model)
    : load_peak_(resident_memory().peak_bytes),
      mapped_(model.weights().mapped_bytes),
      huge_page_weights_(model.huge_page_weight_bytes()) {
  for (const auto& buffer : model.weights().owned) repacked_ += buffer.size();
}

void BenchMemory::exclude_bandwidth_test() { reset_ = reset_peak_resident_memory(); }

nlohmann::ordered_json BenchMemory::report() const {
  const ResidentMemory now = resident_memory();
  const uint64_t peak = reset_ ? std::max(load_peak_, now.peak_bytes) : now.peak_bytes;
  const uint64_t bound = mapped_ + kv_pool_bytes_ + kWorkingMemoryAllowance + repacked_;
  return {{"peak_rss_bytes", peak},
          {"load_peak_rss_bytes", load_peak_},
          {"mapped_weight_bytes", mapped_},
          {"kv_pool_bytes", kv_pool_bytes_},
          {"repacked_weight_bytes", repacked_},
          {"bound_bytes", bound},
          {"within_bound", peak <= bound},
          {"peak_includes_bandwidth_test", !reset_},
          // Weights moved into huge pages at load (--weight-pages), and what the kernel backs
          // with huge pages now (AnonHugePages: it may have given small pages instead).
          {"huge_page_weight_bytes", huge_page_weights_},
          {"anon_huge_page_bytes", anonymous_huge_page_bytes()}};
}

uint64_t single_sequence_kv_bytes(const ModelConfig& config, int64_t capacity, KvDtype dtype) {
  // A single-sequence cache is one block of its whole capacity.
  return static_cast<uint64_t>(KvBlockPool::bytes_per_block(config, capacity, dtype));
}

}  // namespace minimax::cli
