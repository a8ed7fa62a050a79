// How one model is divided among the ranks of a group: the mode selector every part of the model
// asks (one place), and the checks of a requested layout against a model's config. The modes are
// the reference engine's (docs/parallel.md): TP_TP, TP_EP, DP_EP; a single process is kSingle.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "checkpoint/model_config.h"
#include "checkpoint/tensor_key.h"

namespace minimax {

enum class ParallelMode : uint8_t {
  kSingle,  // one process: every weight whole
  kTpTp,    // attention heads and experts' inner width split; partial sums all-reduced
  kTpEp,    // attention heads split; whole experts partitioned; partial sums all-reduced
  kDpEp,    // each rank its own requests' attention; experts partitioned, tokens exchanged
};
std::string_view parallel_mode_name(ParallelMode mode);  // "single", "TP_TP", "TP_EP", "DP_EP"

// What the user asked for, in vLLM's terms.
struct ParallelRequest {
  int tensor_parallel = 1;       // --tensor-parallel-size
  int data_parallel = 1;         // --data-parallel-size
  bool expert_parallel = false;  // --enable-expert-parallel
  // --collective-timeout: once the weights are loaded, a rank that waits longer than this for the
  // others ends the job (a dead link or host); 0 waits forever. 60 s: far above the longest wait
  // within a step that a healthy job has (one rank's long prefill chunk while the others wait).
  double collective_timeout_seconds = 60;
};

// The mode a request selects: T = D = 1 → kSingle; D = 1 → TP_EP with expert parallelism, TP_TP
// without; T = 1, D > 1 → DP_EP (which requires --enable-expert-parallel). Error for T > 1 with
// D > 1 (not supported) and for D > 1 without expert parallelism.
ParallelMode select_parallel_mode(const ParallelRequest& request);

// This rank's place in the layout, checked against the model before any weight is read.
struct ParallelPlan {
  ParallelMode mode = ParallelMode::kSingle;
  int rank = 0;
  int ranks = 1;
  // Attention heads on this rank (TP modes: num_heads / ranks; else all).
  int heads = 0, head_begin = 0;
  // KV heads on this rank and the first one: with more ranks than KV heads, each rank holds the
  // one KV head its query heads read (a copy: `kv_copies` ranks hold each).
  int kv_heads = 0, kv_head_begin = 0, kv_copies = 1;
  // Routed experts held: [expert_begin, expert_end) (all, whole, unless expert-parallel).
  int expert_begin = 0, expert_end = std::numeric_limits<int>::max();

  bool tensor_parallel() const {
    return mode == ParallelMode::kTpTp || mode == ParallelMode::kTpEp;
  }
  bool expert_parallel() const {
    return mode == ParallelMode::kTpEp || mode == ParallelMode::kDpEp;
  }
  bool data_parallel() const { return mode == ParallelMode::kDpEp; }
  bool holds_expert(int e) const { return e >= expert_begin && e < expert_end; }
  // The split rule of a table entry in this mode (tensor_key.h).
  Split split_of(const SplitRules& rules) const;
};

// Checks `request` against `world_size` ranks (N = T × D) and `config` (T divides the query heads,
// T and the KV heads divide one another, the ranks divide the experts under expert parallelism,
// TP_TP's split divides the FFN widths) and returns rank `rank`'s plan. Error naming the flag and
// the sizes otherwise.
ParallelPlan make_parallel_plan(const ParallelRequest& request, int world_size, int rank,
                                const ModelConfig& config);

// The config this rank's blocks run with: heads, KV heads and the split FFN widths reduced to
// the rank's share (num_experts and everything else unchanged).
ModelConfig local_model_config(const ModelConfig& config, const ParallelPlan& plan);

}  // namespace minimax
