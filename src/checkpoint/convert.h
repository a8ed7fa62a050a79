// `minimax convert`: a Quark MXFP4 MiniMax-M2 / M3 checkpoint -> a compressed-tensors FP8
// checkpoint (per-channel e4m3 routed experts holding exactly the MXFP4 values, dynamic per-token
// activations), shard by shard under DST.partial, renamed to DST when complete; resumable.
// docs/convert.md describes the rules, the output and the memory bound.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "checkpoint/convert_stream.h"
#include "checkpoint/convert_summary.h"
#include "checkpoint/mxfp4_to_fp8_exact.h"

namespace minimax {

struct ConvertOptions {
  std::string input_dir;
  std::string output_dir;
  Fp8Target target = Fp8Target::kOcp;
  size_t threads = 0;  // 0 = one per hardware thread
  bool force = false;  // replace an existing output directory
  // Continue from DST.partial: keep the shards its manifest records (after checking their hash and
  // re-verifying them), remove everything else (convert_manifest.h).
  bool resume = false;
  bool show_progress = true;
  StreamLimits limits;
  // Called after each output shard is complete on disk, with the number completed by this run.
  // (The CLI's hidden --stop-after-shards uses it to simulate a kill.)
  std::function<void(size_t)> after_shard;
};

// Converts, verifies every chunk in float64, and returns the counters of the closing summary.
// The source is validated (config, every shard header) before DST.partial is created; any later
// error removes DST.partial, so a failed run leaves neither DST nor DST.partial behind. A run that
// is killed leaves DST.partial, which `resume` continues.
ConvertSummary convert_checkpoint(const ConvertOptions& options);

}  // namespace minimax
