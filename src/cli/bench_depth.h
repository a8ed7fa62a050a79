// `minimax bench --depth N`: decode speed after N tokens of context.
#pragma once

#include <cstdint>
#include <string>

#include "base/progress.h"
#include "model/model.h"

namespace minimax::cli {

// How the N slots of context get their keys and values before decode is timed.
enum class DepthFill {
  // A real prefill of min(N, 512) tokens, whose keys, values and index keys are then copied
  // cyclically over slots [512, N): decode attends (or selects MSA blocks over) the same N slots
  // at the same cost as after a full prefill, since no kernel's work depends on the values. Costs
  // seconds instead of the minutes a quadratic 32K prefill takes on a small machine.
  kTile,
  kPrefill,  // a real prefill of all N tokens, in chunks of 2048
};
DepthFill parse_depth_fill(const std::string& value);  // "tile" | "prefill"
// Tokens prefilled to reach `depth` (for progress).
int64_t depth_fill_tokens(int64_t depth, DepthFill fill);

struct DepthTiming {
  int64_t depth = 0;
  double fill_seconds = 0;
  double decode_seconds = 1e30;  // best of the repeats, for gen_tokens tokens
  double decode_cpu_share = 0;   // CPU time / (wall × threads) of the best run
};

// Fills a fresh cache of element type `dtype` to `depth` tokens, then times `gen_tokens` greedy
// decode steps `repeat` times (each from the same depth) and keeps the fastest. Single process
// only for kTile (the copy touches rank 0's pool alone). Tokens prefilled and decoded are added
// to `progress` (may be null).
DepthTiming time_decode_at_depth(Model& model, int64_t depth, int64_t gen_tokens, int repeat,
                                 KvDtype dtype, DepthFill fill, size_t threads, Progress* progress);

}  // namespace minimax::cli
