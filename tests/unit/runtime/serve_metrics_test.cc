// ServeMetrics: counters, gauges and histograms, and their Prometheus text with vLLM's names.
#include "runtime/serve_metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace minimax {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

TEST(LatencyHistogram, BucketsAreCumulativeAndUpperBoundsInclusive) {
  LatencyHistogram h({0.1, 1.0, 10.0});
  for (double v : {0.05, 0.1, 0.5, 1.0, 3.0, 100.0}) h.observe(v);
  EXPECT_EQ(h.cumulative_counts(), (std::vector<uint64_t>{2, 4, 5}));
  EXPECT_EQ(h.count(), 6u);
  EXPECT_DOUBLE_EQ(h.sum(), 104.65);
}

TEST(LatencyHistogram, VllmBucketBounds) {
  EXPECT_EQ(ttft_buckets().size(), 22u);
  EXPECT_EQ(ttft_buckets().front(), 0.001);
  EXPECT_EQ(ttft_buckets().back(), 2560.0);
  EXPECT_EQ(inter_token_buckets().size(), 19u);
  EXPECT_EQ(inter_token_buckets().back(), 80.0);
  EXPECT_EQ(e2e_latency_buckets().size(), 21u);
  EXPECT_EQ(e2e_latency_buckets().back(), 7680.0);
}

TEST(ServeMetrics, RendersVllmNamesWithTheModelLabel) {
  ServeMetrics m("tiny \"m2\"");
  m.set_requests(3, 2);
  m.set_kv_blocks(25, 100);
  m.add_prompt_tokens(40);
  m.add_prompt_tokens(2);
  m.add_generation_tokens(7);
  m.add_preemptions(1);
  m.add_prefix_cache(64, 32);
  m.record_finish("stop");
  m.record_finish("stop");
  m.record_finish("length");
  m.observe_time_to_first_token(0.03);
  m.observe_inter_token_latency(0.02);
  m.observe_inter_token_latency(0.2);
  m.observe_e2e_latency(1.2);
  const std::string text = m.render_prometheus();
  const std::string label = "model_name=\"tiny \\\"m2\\\"\"";
  EXPECT_TRUE(has_line(text, "# TYPE vllm:num_requests_running gauge")) << text;
  EXPECT_TRUE(has_line(text, "vllm:num_requests_running{" + label + "} 3.0")) << text;
  EXPECT_TRUE(has_line(text, "vllm:num_requests_waiting{" + label + "} 2.0"));
  EXPECT_TRUE(has_line(text, "vllm:kv_cache_usage_perc{" + label + "} 0.25"));
  EXPECT_TRUE(has_line(text, "minimax:kv_blocks_used{" + label + "} 25.0"));
  EXPECT_TRUE(has_line(text, "minimax:kv_blocks_total{" + label + "} 100.0"));
  EXPECT_TRUE(has_line(text, "# TYPE vllm:prompt_tokens counter"));
  EXPECT_TRUE(has_line(text, "vllm:prompt_tokens_total{" + label + "} 42.0"));
  EXPECT_TRUE(has_line(text, "vllm:generation_tokens_total{" + label + "} 7.0"));
  EXPECT_TRUE(has_line(text, "vllm:num_preemptions_total{" + label + "} 1.0"));
  EXPECT_TRUE(has_line(text, "vllm:prefix_cache_queries_total{" + label + "} 64.0"));
  EXPECT_TRUE(has_line(text, "vllm:prefix_cache_hits_total{" + label + "} 32.0"));
  EXPECT_TRUE(
      has_line(text, "vllm:request_success_total{" + label + ",finished_reason=\"stop\"} 2.0"));
  EXPECT_TRUE(
      has_line(text, "vllm:request_success_total{" + label + ",finished_reason=\"length\"} 1.0"));
  EXPECT_TRUE(
      has_line(text, "vllm:request_success_total{" + label + ",finished_reason=\"abort\"} 0.0"));
  EXPECT_TRUE(has_line(text, "# TYPE vllm:time_to_first_token_seconds histogram"));
  EXPECT_TRUE(
      has_line(text, "vllm:time_to_first_token_seconds_bucket{" + label + ",le=\"0.02\"} 0.0"));
  EXPECT_TRUE(
      has_line(text, "vllm:time_to_first_token_seconds_bucket{" + label + ",le=\"0.04\"} 1.0"));
  EXPECT_TRUE(
      has_line(text, "vllm:time_to_first_token_seconds_bucket{" + label + ",le=\"+Inf\"} 1.0"));
  EXPECT_TRUE(has_line(text, "vllm:time_to_first_token_seconds_count{" + label + "} 1.0"));
  EXPECT_TRUE(has_line(text, "vllm:time_to_first_token_seconds_sum{" + label + "} 0.03"));
  EXPECT_TRUE(
      has_line(text, "vllm:inter_token_latency_seconds_bucket{" + label + ",le=\"0.025\"} 1.0"));
  EXPECT_TRUE(
      has_line(text, "vllm:inter_token_latency_seconds_bucket{" + label + ",le=\"0.2\"} 2.0"));
  EXPECT_TRUE(has_line(text, "vllm:inter_token_latency_seconds_count{" + label + "} 2.0"));
  EXPECT_TRUE(
      has_line(text, "vllm:e2e_request_latency_seconds_bucket{" + label + ",le=\"1.0\"} 0.0"));
  EXPECT_TRUE(
      has_line(text, "vllm:e2e_request_latency_seconds_bucket{" + label + ",le=\"1.5\"} 1.0"));
  // Every sample line carries the model label.
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    if (!line.empty() && line[0] != '#') {
      EXPECT_NE(line.find(label), std::string::npos) << line;
    }
    start = end + 1;
  }
}

TEST(ServeMetrics, SnapshotAndConcurrentUpdates) {
  ServeMetrics m("x");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        m.add_generation_tokens(1);
        m.observe_inter_token_latency(0.01);
        if (i % 100 == 0) (void)m.render_prometheus();
      }
    });
  for (auto& t : threads) t.join();
  const ServeMetrics::Snapshot s = m.snapshot();
  EXPECT_EQ(s.generation_tokens, 4000);
  EXPECT_EQ(s.itl_count, 4000u);
  EXPECT_EQ(s.finished.at("stop"), 0);
}

}  // namespace
}  // namespace minimax
