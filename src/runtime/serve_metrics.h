// The server's metrics: gauges, counters and latency histograms that the engine updates, rendered
// as Prometheus text with vLLM's metric names (so existing dashboards and the gates read them)
// and a model_name label. Thread-safe: the engine loop writes, HTTP handlers render.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/spec/spec_decode_counts.h"

namespace minimax {

// Cumulative histogram with fixed upper bounds (the +Inf bucket is implicit).
class LatencyHistogram {
 public:
  explicit LatencyHistogram(std::vector<double> bounds);
  void observe(double value);
  const std::vector<double>& bounds() const { return bounds_; }
  // counts()[i] = observations <= bounds()[i] (cumulative, as Prometheus reports them).
  std::vector<uint64_t> cumulative_counts() const;
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> per_bucket_;  // observations in (bounds[i-1], bounds[i]]
  uint64_t count_ = 0;
  double sum_ = 0;
};

// vLLM's bucket bounds (vllm/v1/metrics/loggers.py).
const std::vector<double>& ttft_buckets();
const std::vector<double>& inter_token_buckets();
const std::vector<double>& e2e_latency_buckets();

class ServeMetrics {
 public:
  explicit ServeMetrics(std::string model_name);

  // Gauges, set by the engine after every step.
  void set_requests(int64_t running, int64_t waiting);
  void set_kv_blocks(int64_t used, int64_t total);

  // Counters.
  void add_prompt_tokens(int64_t n);
  void add_generation_tokens(int64_t n);
  void add_preemptions(int64_t n);
  // `queries` prompt tokens looked up in the prefix cache, `hits` of them found.
  void add_prefix_cache(int64_t queries, int64_t hits);
  // One verify step of speculative decoding: `drafted` draft tokens, the first `accepted` right.
  void add_spec_decode(int64_t drafted, int64_t accepted);
  // One finished request; `reason` is stop, length, abort or error (counted under its label).
  void record_finish(std::string_view reason);

  // Histograms (seconds).
  void observe_time_to_first_token(double seconds);
  void observe_inter_token_latency(double seconds);
  void observe_e2e_latency(double seconds);

  struct Snapshot {
    int64_t running = 0, waiting = 0, kv_blocks_used = 0, kv_blocks_total = 0;
    int64_t prompt_tokens = 0, generation_tokens = 0, preemptions = 0;
    int64_t prefix_cache_queries = 0, prefix_cache_hits = 0;
    std::map<std::string, int64_t> finished;  // by reason
    SpecDecodeCounts spec;                    // speculative decoding's verify steps
    uint64_t ttft_count = 0, itl_count = 0, e2e_count = 0;
  };
  Snapshot snapshot() const;

  // The Prometheus text exposition format (version 0.0.4), as prometheus_client writes it: HELP
  // and TYPE lines, counters as NAME_total, histograms as _bucket{le=...}, _count, _sum.
  std::string render_prometheus() const;

  const std::string& model_name() const { return model_name_; }

 private:
  std::string model_name_;
  mutable std::mutex mutex_;
  Snapshot values_;
  LatencyHistogram ttft_, itl_, e2e_;
};

}  // namespace minimax
