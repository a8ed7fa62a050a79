// Throughput of the serving engine over a grid of context length × concurrent streams
// (`minimax bench --sweep`): per cell, `streams` requests with distinct random-token prompts of
// `context` tokens are submitted together to one Engine (the continuous batching, paged KV cache
// and scheduler that `serve` runs), greedy, no EOS, a fixed number of output tokens. Measured per
// cell: the time to first token of each stream (from the common submission), and the decode rate
// while every stream is decoding: the tokens of the engine steps after the one that gave the last
// stream its first token, up to the one that gave some stream its last, over the time between
// those two steps. Tokens carry their step and time from the engine (TokenOutput), so the
// figures do not depend on when the consumer threads wake up.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/model.h"
#include "runtime/decode_bytes.h"
#include "runtime/prefill_chunk.h"
#include "text/bpe_tokenizer.h"

namespace minimax {

enum class SweepWarmup {
  // One run at the largest cell (most streams × longest context) before the first timed one. On
  // host backends that warms every shape: the weights are paged in, the step workspace and the
  // KV pool pages only ever grow, and no kernel is compiled per shape.
  kLargest,
  kEach,  // every cell runs once untimed right before its timed run
};

struct SweepOptions {
  std::vector<int64_t> contexts;  // prompt tokens per stream
  std::vector<int64_t> streams;   // requests running at once
  // Decode steps timed while every stream decodes. Each request generates this many tokens plus
  // the steps the other streams' prefills may take, so that the window holds about this many.
  int64_t tokens = 32;
  int64_t max_batched_tokens = kDefaultPrefillChunk;  // the engine's token budget per step
  int64_t kv_block_size = 16;
  KvDtype kv_cache_dtype = KvDtype::kF32;  // the CLI's auto
  SweepWarmup warmup = SweepWarmup::kLargest;
  uint64_t seed = 1;
  size_t threads = 0;  // the model's compute threads, for SweepCell::cpu_share (0: not reported)
  // Called from the consumer threads with the number of tokens (prompt or generated) just
  // processed, for a progress display; may be empty.
  std::function<void(int64_t tokens)> on_tokens;
};

struct SweepCell {
  int64_t context = 0, streams = 0;
  double ttft_mean_seconds = 0, ttft_max_seconds = 0;
  double decode_tok_s_per_stream = 0;  // aggregate / streams
  double aggregate_tok_s = 0;          // every stream's tokens inside the window / its length
  // aggregate_tok_s over the 1-stream cell of the same context; NaN when the sweep has none.
  double ratio_to_one_stream = 0;
  int64_t window_tokens = 0;      // generated tokens inside the window (all streams)
  int64_t tokens_per_stream = 0;  // generated per request
  // Process CPU time over wall time × threads during the cell's timed run (prompts and decode):
  // well below 1 means other processes took the cores, and the speeds understate the machine.
  // NaN when SweepOptions::threads is 0.
  double cpu_share = 0;
  // The aggregate tok/s that reading the step's weights at the measured read bandwidth allows:
  // streams × read bytes/s over step_weight_bytes (runtime/decode_bytes.h: the shared weights
  // once, the union of the streams' experts), and aggregate_tok_s over it. NaN when not set
  // (set_union_bound).
  double union_bound_tok_s = std::nan("");
  double ratio_to_union_bound = std::nan("");
};

// One generated token: the engine step that produced it and the seconds from the common
// submission to its sampling.
struct TokenStamp {
  int64_t step = 0;
  double seconds = 0;
};
// Every generated token of each stream, in order.
using StreamTokenTimes = std::vector<std::vector<TokenStamp>>;

// The TTFT and window figures of one cell from its token stamps (every stream has >= 2 tokens).
// Error when no step had every stream decoding (the first stream finished before the last one
// started).
SweepCell summarize_sweep_cell(int64_t context, const StreamTokenTimes& times);

// Fills ratio_to_one_stream of every cell from the 1-stream cell of its context.
void set_ratio_to_one_stream(std::vector<SweepCell>& cells);

// Fills union_bound_tok_s and ratio_to_union_bound of every cell from the model's bytes per
// decoded token, its routing (num_experts, top_k) and a read bandwidth in GB/s (> 0).
void set_union_bound(std::vector<SweepCell>& cells, const DecodeBytes& per_token,
                     int64_t num_experts, int64_t top_k, double read_gbps);

// Output tokens per request of a cell: options.tokens plus room for the other prefills.
int64_t sweep_tokens_per_stream(const SweepOptions& options, int64_t context, int64_t streams);
// Prompt plus generated tokens the whole sweep processes, warm-up included (progress total).
int64_t sweep_total_tokens(const SweepOptions& options);

// Runs the grid, cells in order of context then streams. Errors name the option at fault (a
// context that does not fit the model, an empty list); a request that does not produce every
// token, a prefix-cache hit or a preemption during a timed run is an Error too, since the figures
// would not mean what they say.
std::vector<SweepCell> run_throughput_sweep(Model& model, const BpeTokenizer& tokenizer,
                                            const SweepOptions& options);

}  // namespace minimax
