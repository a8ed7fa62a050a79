// The sweep: one Engine sized for the largest cell, one consumer thread per stream that stamps
// each token as it arrives.
#include "runtime/throughput_sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>

#include "base/error.h"
#include "runtime/bandwidth.h"
#include "runtime/engine.h"

namespace minimax {
namespace {

using Clock = std::chrono::steady_clock;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct CellShape {
  int64_t context = 0, streams = 0, tokens_per_stream = 0;
};

std::vector<CellShape> cell_shapes(const SweepOptions& options) {
  std::vector<CellShape> shapes;
  for (int64_t context : options.contexts)
    for (int64_t streams : options.streams)
      shapes.push_back({context, streams, sweep_tokens_per_stream(options, context, streams)});
  return shapes;
}

void check_options(const SweepOptions& options, const ModelConfig& config) {
  if (options.contexts.empty()) fail("--sweep-contexts: no context length given");
  if (options.streams.empty()) fail("--sweep-streams: no stream count given");
  if (options.tokens < 2) fail("--sweep-tokens: must be >= 2, got {}", options.tokens);
  for (int64_t c : options.contexts)
    if (c <= 0) fail("--sweep-contexts: must be > 0, got {}", c);
  for (int64_t s : options.streams) {
    if (s <= 0) fail("--sweep-streams: must be > 0, got {}", s);
    // Every running stream's decode token takes one unit of the step's budget.
    if (s >= options.max_batched_tokens)
      fail("--sweep-streams: {} streams leave no room for prompts in a step of {} tokens", s,
           options.max_batched_tokens);
  }
  for (const CellShape& c : cell_shapes(options))
    if (c.context + c.tokens_per_stream > config.max_position_embeddings)
      fail(
          "--sweep-contexts: {} prompt tokens + {} generated ({} streams) exceed the model's {} "
          "positions",
          c.context, c.tokens_per_stream, c.streams, config.max_position_embeddings);
}

// Submits one cell's requests together and stamps every generated token. Checks that each
// request ran as the figures assume: every token generated, no prompt token taken from the prefix
// cache, no preemption.
struct CellRun {
  StreamTokenTimes times;
  double cpu_share = 0;
};

CellRun run_cell(Engine& engine, SampleRng& rng, int vocab, const CellShape& cell,
                 const SweepOptions& options) {
  std::vector<std::shared_ptr<RequestStream>> handles;
  const ServeMetrics::Snapshot before = engine.metrics().snapshot();
  engine.pause();  // so that all requests meet in the first step
  for (int64_t s = 0; s < cell.streams; ++s) {
    EngineRequest request;
    request.prompt.resize(cell.context);
    for (int32_t& id : request.prompt) id = static_cast<int32_t>(rng.next_unit() * vocab);
    request.sampling.temperature = 0;
    request.stop.max_tokens = cell.tokens_per_stream;  // no stop ids: EOS is ignored
    handles.push_back(engine.submit(std::move(request)));
  }
  const Clock::time_point start = Clock::now();
  const double cpu_start = process_cpu_seconds();
  engine.resume();
  StreamTokenTimes times(cell.streams);
  std::vector<EngineEvent> finals(cell.streams);
  std::vector<std::thread> consumers;
  for (int64_t s = 0; s < cell.streams; ++s)
    consumers.emplace_back([&, s] {
      EngineEvent event;
      for (;;) {
        if (!handles[s]->wait(event, std::chrono::milliseconds(500))) continue;
        const bool first = times[s].empty() && !event.tokens.empty();
        for (const TokenOutput& token : event.tokens)
          times[s].push_back(
              {token.step, std::chrono::duration<double>(token.time - start).count()});
        if (options.on_tokens)
          options.on_tokens(static_cast<int64_t>(event.tokens.size()) + (first ? cell.context : 0));
        if (event.finished) {
          finals[s] = event;
          return;
        }
      }
    });
  for (std::thread& t : consumers) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu_share = options.threads == 0 ? std::nan("")
                                                : (process_cpu_seconds() - cpu_start) /
                                                      (wall * static_cast<double>(options.threads));
  for (int64_t s = 0; s < cell.streams; ++s) {
    const EngineEvent& e = finals[s];
    const std::string where =
        fmt::format("sweep cell context {} × {} streams, stream {}", cell.context, cell.streams, s);
    if (e.finish_reason != "length" ||
        static_cast<int64_t>(times[s].size()) != cell.tokens_per_stream)
      fail("{}: finished with '{}' after {} of {} tokens{}", where, e.finish_reason,
           times[s].size(), cell.tokens_per_stream, e.error.empty() ? "" : ": " + e.error);
    if (e.cached_prompt_tokens != 0)
      fail("{}: {} prompt tokens came from the prefix cache", where, e.cached_prompt_tokens);
  }
  const int64_t preempted = engine.metrics().snapshot().preemptions - before.preemptions;
  if (preempted != 0)
    fail("sweep cell context {} × {} streams: {} preemptions (the KV pool is too small)",
         cell.context, cell.streams, preempted);
  return {std::move(times), cpu_share};
}

}  // namespace

SweepCell summarize_sweep_cell(int64_t context, const StreamTokenTimes& times) {
  if (times.empty()) fail("sweep cell context {}: no streams", context);
  SweepCell cell;
  cell.context = context;
  cell.streams = static_cast<int64_t>(times.size());
  cell.tokens_per_stream = static_cast<int64_t>(times[0].size());
  int64_t all_started = 0, first_done = std::numeric_limits<int64_t>::max();
  double ttft_sum = 0;
  for (const std::vector<TokenStamp>& t : times) {
    if (t.size() < 2) fail("sweep cell context {}: a stream has fewer than 2 tokens", context);
    ttft_sum += t.front().seconds;
    cell.ttft_max_seconds = std::max(cell.ttft_max_seconds, t.front().seconds);
    all_started = std::max(all_started, t.front().step);
    first_done = std::min(first_done, t.back().step);
  }
  cell.ttft_mean_seconds = ttft_sum / static_cast<double>(times.size());
  if (first_done <= all_started)
    fail(
        "sweep cell context {} × {} streams: no step had every stream decoding (the first "
        "stream finished before the last one started)",
        context, cell.streams);
  // The window's ends are the times of steps all_started and first_done (the earliest token of
  // each: a step samples its sequences one after another).
  double start = std::numeric_limits<double>::infinity(), end = start;
  for (const std::vector<TokenStamp>& t : times)
    for (const TokenStamp& token : t) {
      if (token.step == all_started) start = std::min(start, token.seconds);
      if (token.step == first_done) end = std::min(end, token.seconds);
      cell.window_tokens += token.step > all_started && token.step <= first_done;
    }
  if (!(end > start))
    fail("sweep cell context {} × {} streams: steps {} and {} have the same time", context,
         cell.streams, all_started, first_done);
  cell.aggregate_tok_s = static_cast<double>(cell.window_tokens) / (end - start);
  cell.decode_tok_s_per_stream = cell.aggregate_tok_s / static_cast<double>(cell.streams);
  return cell;
}

void set_ratio_to_one_stream(std::vector<SweepCell>& cells) {
  for (SweepCell& cell : cells) {
    cell.ratio_to_one_stream = std::nan("");
    for (const SweepCell& one : cells)
      if (one.context == cell.context && one.streams == 1)
        cell.ratio_to_one_stream = cell.aggregate_tok_s / one.aggregate_tok_s;
  }
}

void set_union_bound(std::vector<SweepCell>& cells, const DecodeBytes& per_token,
                     int64_t num_experts, int64_t top_k, double read_gbps) {
  if (!(read_gbps > 0)) fail("set_union_bound: read bandwidth {} GB/s is not positive", read_gbps);
  for (SweepCell& cell : cells) {
    const double step = step_weight_bytes(per_token, num_experts, top_k, cell.streams);
    cell.union_bound_tok_s = static_cast<double>(cell.streams) * read_gbps * 1e9 / step;
    cell.ratio_to_union_bound = cell.aggregate_tok_s / cell.union_bound_tok_s;
  }
}

int64_t sweep_tokens_per_stream(const SweepOptions& options, int64_t context, int64_t streams) {
  // While the other streams' prompts are prefilled (in chunks of what the step's budget leaves
  // after the running decodes), the first stream keeps decoding, one token per step.
  // (A budget without room for prompts is refused before any run; the max keeps this defined.)
  const int64_t room = std::max<int64_t>(1, options.max_batched_tokens - streams);
  const int64_t prefill_steps = streams > 1 ? ceil_div((streams - 1) * context, room) : 0;
  return options.tokens + prefill_steps + streams;
}

int64_t sweep_total_tokens(const SweepOptions& options) {
  const std::vector<CellShape> shapes = cell_shapes(options);
  int64_t total = 0, largest = 0;
  for (const CellShape& c : shapes) {
    const int64_t tokens = c.streams * (c.context + c.tokens_per_stream);
    total += tokens;
    largest = std::max(largest, tokens);
  }
  return options.warmup == SweepWarmup::kEach ? 2 * total : total + largest;
}

std::vector<SweepCell> run_throughput_sweep(Model& model, const BpeTokenizer& tokenizer,
                                            const SweepOptions& options) {
  check_options(options, model.config());
  const std::vector<CellShape> shapes = cell_shapes(options);
  const CellShape largest =
      *std::max_element(shapes.begin(), shapes.end(), [](const CellShape& a, const CellShape& b) {
        return a.streams * (a.context + a.tokens_per_stream) <
               b.streams * (b.context + b.tokens_per_stream);
      });
  EngineOptions engine_options;
  engine_options.max_num_seqs = *std::max_element(options.streams.begin(), options.streams.end());
  engine_options.max_waiting = engine_options.max_num_seqs;  // a cell's requests all queue at once
  engine_options.max_batched_tokens = options.max_batched_tokens;
  engine_options.kv_block_size = options.kv_block_size;
  engine_options.kv_cache_dtype = options.kv_cache_dtype;
  engine_options.model_name = "sweep";
  // Room for the largest cell's requests all at once (a block more per stream for the token
  // being appended), so that no timed run is preempted.
  for (const CellShape& c : shapes) {
    engine_options.max_model_len =
        std::max(engine_options.max_model_len, c.context + c.tokens_per_stream + 1);
    engine_options.kv_cache_blocks = std::max(
        engine_options.kv_cache_blocks,
        c.streams * (ceil_div(c.context + c.tokens_per_stream, options.kv_block_size) + 1));
  }
  Engine engine(model, tokenizer, engine_options);
  SampleRng rng(options.seed);  // one stream of ids for all prompts: no two share a prefix
  const int vocab = model.config().vocab_size;
  if (options.warmup == SweepWarmup::kLargest) run_cell(engine, rng, vocab, largest, options);
  std::vector<SweepCell> cells;
  for (const CellShape& shape : shapes) {
    if (options.warmup == SweepWarmup::kEach) run_cell(engine, rng, vocab, shape, options);
    const CellRun run = run_cell(engine, rng, vocab, shape, options);
    cells.push_back(summarize_sweep_cell(shape.context, run.times));
    cells.back().cpu_share = run.cpu_share;
  }
  set_ratio_to_one_stream(cells);
  return cells;
}

}  // namespace minimax
