// Server metrics and their Prometheus rendering (runtime/serve_metrics.h).
#include "runtime/serve_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/error.h"

namespace minimax {
namespace {

// Numbers as Python's repr prints floats (prometheus_client's style): 1.0, 0.25, 2560.0.
std::string number(double value) {
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (std::isnan(value)) return "NaN";
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text;
}

// A label value with backslash, double quote and newline escaped (exposition format rules).
std::string escape_label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

class Writer {
 public:
  explicit Writer(std::string_view model_name)
      : label_(fmt::format("model_name=\"{}\"", escape_label(model_name))) {}

  void header(std::string_view name, std::string_view type, std::string_view help) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void sample(std::string_view name, double value, std::string_view extra_labels = {}) {
    if (extra_labels.empty()) {
      out_ += fmt::format("{}{{{}}} {}\n", name, label_, number(value));
    } else {
      out_ += fmt::format("{}{{{},{}}} {}\n", name, label_, extra_labels, number(value));
    }
  }
  void gauge(std::string_view name, std::string_view help, double value) {
    header(name, "gauge", help);
    sample(name, value);
  }
  // prometheus_client names the family without "_total" and the sample with it.
  void counter(std::string_view family, std::string_view help, double value) {
    header(family, "counter", help);
    sample(fmt::format("{}_total", family), value);
  }
  void histogram(std::string_view name, std::string_view help, const LatencyHistogram& h) {
    header(name, "histogram", help);
    const std::vector<uint64_t> counts = h.cumulative_counts();
    for (size_t i = 0; i < h.bounds().size(); ++i)
      sample(fmt::format("{}_bucket", name), static_cast<double>(counts[i]),
             fmt::format("le=\"{}\"", number(h.bounds()[i])));
    sample(fmt::format("{}_bucket", name), static_cast<double>(h.count()), "le=\"+Inf\"");
    sample(fmt::format("{}_count", name), static_cast<double>(h.count()));
    sample(fmt::format("{}_sum", name), h.sum());
  }
  std::string take() { return std::move(out_); }

 private:
  std::string label_;
  std::string out_;
};

}  // namespace

LatencyHistogram::LatencyHistogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), per_bucket_(bounds_.size() + 1, 0) {
  if (!std::is_sorted(bounds_.begin(), bounds_.end()) ||
      std::adjacent_find(bounds_.begin(), bounds_.end()) != bounds_.end())
    fail("histogram bounds: must be strictly increasing");
}

void LatencyHistogram::observe(double value) {
  // Bucket i holds values in (bounds[i-1], bounds[i]]: the first bound >= value.
  const size_t index = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  ++per_bucket_[index];
  ++count_;
  sum_ += value;
}

std::vector<uint64_t> LatencyHistogram::cumulative_counts() const {
  std::vector<uint64_t> counts(bounds_.size());
  uint64_t total = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) counts[i] = total += per_bucket_[i];
  return counts;
}

const std::vector<double>& ttft_buckets() {
  static const std::vector<double> bounds = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                             0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                             20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
  return bounds;
}

const std::vector<double>& inter_token_buckets() {
  static const std::vector<double> bounds = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                                             0.3,  0.4,   0.5,  0.75,  1.0, 2.5,  5.0,
                                             7.5,  10.0,  20.0, 40.0,  80.0};
  return bounds;
}

const std::vector<double>& e2e_latency_buckets() {
  static const std::vector<double> bounds = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                                             5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                                             60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
  return bounds;
}

ServeMetrics::ServeMetrics(std::string model_name)
    : model_name_(std::move(model_name)),
      ttft_(ttft_buckets()),
      itl_(inter_token_buckets()),
      e2e_(e2e_latency_buckets()) {
  for (const char* reason : {"stop", "length", "abort", "error"}) values_.finished[reason] = 0;
}

void ServeMetrics::set_requests(int64_t running, int64_t waiting) {
  std::lock_guard<std::mutex> lock(mutex_);
  values_.running = running;
  values_.waiting = waiting;
}

void ServeMetrics::set_kv_blocks(int64_t used, int64_t total) {
  std::lock_guard<std::mutex> lock(mutex_);
  values_.kv_blocks_used = used;
  values_.kv_blocks_total = total;
}

void ServeMetrics::add_prompt_tokens(int64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  values_.prompt_tokens += n;
}

void ServeMetrics::add_generation_tokens(int64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  values_.generation_tokens += n;
}

void ServeMetrics::add_preemptions(int64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  values_.preemptions += n;
}

void ServeMetrics::add_spec_decode(int64_t drafted, int64_t accepted) {
  std::lock_guard<std::mutex> lock(mutex_);
  values_.spec.add_verify(drafted, accepted);
}

void ServeMetrics::add_prefix_cache(int64_t queries, int64_t hits) {
  std::lock_guard<std::mutex> lock(mutex_);
  values_.prefix_cache_queries += queries;
  values_.prefix_cache_hits += hits;
}

void ServeMetrics::record_finish(std::string_view reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++values_.finished[std::string(reason)];
}

void ServeMetrics::observe_time_to_first_token(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ttft_.observe(seconds);
}

void ServeMetrics::observe_inter_token_latency(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  itl_.observe(seconds);
}

void ServeMetrics::observe_e2e_latency(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  e2e_.observe(seconds);
}

ServeMetrics::Snapshot ServeMetrics::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Snapshot snapshot = values_;
  snapshot.ttft_count = ttft_.count();
  snapshot.itl_count = itl_.count();
  snapshot.e2e_count = e2e_.count();
  return snapshot;
}

std::string ServeMetrics::render_prometheus() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Snapshot& v = values_;
  Writer w(model_name_);
  w.gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
          static_cast<double>(v.running));
  w.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
          static_cast<double>(v.waiting));
  const double usage = v.kv_blocks_total > 0 ? static_cast<double>(v.kv_blocks_used) /
                                                   static_cast<double>(v.kv_blocks_total)
                                             : 0.0;
  w.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", usage);
  w.gauge("minimax:kv_blocks_used", "KV-cache blocks held by requests.",
          static_cast<double>(v.kv_blocks_used));
  w.gauge("minimax:kv_blocks_total", "KV-cache blocks in the pool.",
          static_cast<double>(v.kv_blocks_total));
  w.counter("vllm:num_preemptions", "Cumulative number of preemptions from the engine.",
            static_cast<double>(v.preemptions));
  w.counter("vllm:prompt_tokens", "Number of prefill tokens processed.",
            static_cast<double>(v.prompt_tokens));
  w.counter("vllm:generation_tokens", "Number of generation tokens processed.",
            static_cast<double>(v.generation_tokens));
  w.counter("vllm:prefix_cache_queries",
            "Prefix cache queries, in terms of number of queried tokens.",
            static_cast<double>(v.prefix_cache_queries));
  w.counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
            static_cast<double>(v.prefix_cache_hits));
  w.counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.",
            static_cast<double>(v.spec.num_drafts));
  w.counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.",
            static_cast<double>(v.spec.num_draft_tokens));
  w.counter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.",
            static_cast<double>(v.spec.num_accepted_tokens));
  w.header("vllm:spec_decode_num_accepted_tokens_per_pos", "counter",
           "Accepted tokens per draft position.");
  for (size_t i = 0; i < v.spec.accepted_per_pos.size(); ++i)
    w.sample("vllm:spec_decode_num_accepted_tokens_per_pos_total",
             static_cast<double>(v.spec.accepted_per_pos[i]), fmt::format("position=\"{}\"", i));
  w.header("vllm:request_success", "counter", "Count of successfully processed requests.");
  for (const auto& [reason, count] : v.finished)
    w.sample("vllm:request_success_total", static_cast<double>(count),
             fmt::format("finished_reason=\"{}\"", escape_label(reason)));
  w.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
              ttft_);
  w.histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
              itl_);
  w.histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
              e2e_);
  return w.take();
}

}  // namespace minimax
