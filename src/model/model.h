// A loaded MiniMax-M2 / M3 model: config, weights in their stored layout, the kernel backend it
// owns, and the forward pass (M2 and M3 written once; the architecture differences are data in
// ModelConfig). The forward pass runs entirely through the backend: inputs are uploaded to its
// workspace, every computation and copy on activations is one of its ops, and only the logits come
// back. Over several ranks (a Communicator of size > 1, docs/parallel.md) each rank holds its
// share of the weights; rank 0 drives, and the others follow every step it takes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "checkpoint/model_config.h"
#include "checkpoint/quant_config.h"
#include "formats/tensor_store.h"
#include "kernels/backend.h"
#include "model/activation_quant.h"
#include "model/kv_cache.h"
#include "model/model_weights.h"
#include "parallel/communicator.h"
#include "parallel/parallel_mode.h"

namespace minimax {

struct ForwardContext;  // model/sublayers.h

enum class MoePath : uint8_t {
  kFast,     // the backend's grouped MoE on the stored expert format
  kDequant,  // experts decoded to bf16 at load, bf16 activations inside the experts
};
std::string_view moe_path_name(MoePath path);  // "fast" / "dequant"
MoePath parse_moe_path(std::string_view text, std::string_view what);

struct ModelOptions {
  BackendKind backend = BackendKind::kCpu;
  // The CPU backend's ISA level, AMX use and activation precision (f32 by default: the exact path
  // the logits goldens hold); the commands set it from --activations and MINIMAX_CPU_*.
  CpuKernelConfig cpu;
  // --cpu-moe: with a device backend, the routed experts run on the CPU kernels (BackendOptions).
  bool cpu_moe = false;
  MoePath moe_path = MoePath::kFast;
  // Emulate the runtime's dynamic FP8 activation quantization (model/activation_quant.h).
  bool emulate_activation_quant = false;
  // Diagnostic: MSA layers attend densely (what the HF remote code computes; spec §6 item 6).
  bool dense_attention = false;
  // A progress bar on stderr while the weights are read in at load (commands; off for library
  // users and tests). They are read in either way.
  bool show_load_progress = false;
  // Memory available to this process (the commands: MemAvailable or the cgroup's room); weights
  // larger than it are not read in at load (should_prefault). 0: unknown, always read in.
  int64_t memory_available_bytes = 0;
  // Weights read in at load go into transparent huge pages where the kernel offers them
  // (base/huge_pages.h; the commands' --weight-pages, default on): fewer TLB misses for a decode
  // that reads experts from all over the checkpoint. Off: they stay in the file mapping's pages.
  bool huge_page_weights = false;
  size_t threads = 0;          // worker threads when no pool is given; 0 = hardware threads
  ThreadPool* pool = nullptr;  // shared pool (not owned); null = the model makes its own
  // A kernel table to run on a host backend instead of `backend`'s (tests and experiments); its
  // null entries are filled from the reference.
  const KernelOps* kernels = nullptr;
  // A backend to use instead of both (tests: e.g. one whose memory the host may not touch).
  std::function<std::unique_ptr<Backend>()> make_backend;
  // How the ranks of the communicator divide the model (--tensor-parallel-size and friends);
  // T × D must equal the number of ranks.
  ParallelRequest parallel;
};

enum class LogitsFor : uint8_t { kLastToken, kAllTokens };

// One sequence of a batched forward step (Model::forward_batch).
struct BatchSequence {
  std::span<const int32_t> tokens;     // not empty
  std::span<const int32_t> positions;  // same length
  KvCache* cache = nullptr;
  LogitsFor which = LogitsFor::kLastToken;
};

class Model {
 public:
  // Opens checkpoint directory `dir` (config.json, quantization config, shards), checks that the
  // architecture has a record (checkpoint/arch/architecture.h), and loads the weights. With a
  // communicator of several ranks every rank calls it; the layout (options.parallel) and the
  // sameness of binary, config and tensor table on every rank are checked before any weight is
  // read, and each rank then reads only its share.
  static std::unique_ptr<Model> load(const std::string& dir, const ModelOptions& options = {},
                                     const Communicator* comm = nullptr);

  Model(ModelConfig config, QuantConfig quant, std::unique_ptr<TensorStore> store,
        const ModelOptions& options, const Communicator* comm);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const { return config_; }
  const QuantConfig& quant() const { return quant_; }
  const ModelWeights& weights() const { return weights_; }
  const KernelOps& ops() const { return backend_->ops(); }
  Backend& backend() const { return *backend_; }
  const ModelOptions& options() const { return options_; }
  const ParallelPlan& plan() const { return plan_; }
  // The checkpoint bytes each rank's weights read, by rank (one entry in a single process).
  const std::vector<uint64_t>& mapped_bytes_by_rank() const { return mapped_by_rank_; }
  // The bytes of this rank's weights moved into huge pages at load
  // (ModelOptions::huge_page_weights).
  uint64_t huge_page_weight_bytes() const { return huge_page_weight_bytes_; }

  // Ranks other than 0 of a parallel group: rank 0's callers use the model as in one process,
  // and every step and every KV pool it creates or frees is sent to the others, which call
  // follow() after loading. follow() runs what arrives until rank 0's model is destroyed.
  bool is_follower() const { return plan_.rank != 0; }
  void follow();

  // A single-sequence cache of `capacity` slots in the backend's memory (Error if not positive).
  KvCache new_cache(int64_t capacity, KvDtype dtype = KvDtype::kF32) const;
  // A pool of KV blocks in the backend's memory for many sequences (the serving engine's).
  std::unique_ptr<KvBlockPool> new_kv_pool(int64_t num_blocks, int64_t block_size,
                                           KvDtype dtype = KvDtype::kF32) const;

  // Runs `tokens` at `positions` (same length; token t sits at cache slot positions[t]), writes
  // their keys and values into `cache`, and returns f32 logits: [1, vocab] for the last token or
  // [T, vocab]. Query t attends slots [0, positions[t]], which must all be filled once this
  // call's tokens are written (Error otherwise).
  std::vector<float> forward(std::span<const int32_t> tokens, std::span<const int32_t> positions,
                             KvCache& cache, LogitsFor which = LogitsFor::kLastToken);

  // Runs several sequences in one pass: embedding, norms, projections, MoE and lm_head over all
  // their tokens together (the weights are read once per step), attention per sequence on its own
  // cache. Returns logits rows in batch order: 1 row per kLastToken sequence, T rows per
  // kAllTokens. Same checks and errors as forward() (message names the batch index), all made
  // before any cache changes; a cache may appear only once. A sequence's logits are bit-identical
  // whether it runs alone or with others (docs/model.md says why). Calls from several threads
  // are safe and run one at a time.
  std::vector<float> forward_batch(std::span<const BatchSequence> batch);

  // A draft head's taps (EAGLE-3, docs/eagle3.md): from now on every step keeps, for each of its
  // rows, the hidden state entering each of `layers` (the residual stream after that many
  // layers), at no extra forward pass. Rank 0 holds them: under TP it runs the whole batch; under
  // DP_EP (where rank 0 calls this, the others follow) each rank sends its sequences' rows to
  // rank 0 with their logits. Empty: off.
  void set_hidden_taps(std::vector<int> layers);
  // The last step's taps: one row per token of the step in batch order, each the tapped layers'
  // hidden states side by side ([rows, layers × hidden]). Valid until the next step.
  std::span<const float> hidden_taps() const { return taps_; }

 private:
  // forward / forward_batch: checks (errors say "forward" when `single`, else the batch index),
  // then the step on every rank.
  std::vector<float> run_batch(std::span<const BatchSequence> batch, bool single);
  // One step on this rank: the whole batch under TP (logits gathered), this rank's sequences
  // under DP_EP (`dp_rank[i]` says whose; logits collected at rank 0). Every rank calls it.
  std::vector<float> run_step(std::span<const BatchSequence> batch,
                              std::span<const int32_t> dp_rank);
  // The layers over `batch` (empty only on a DP_EP rank with nothing to do this step): this
  // rank's logit rows, of its vocabulary share.
  std::vector<float> run_layers(std::span<const BatchSequence> batch);
  // The steps of run_layers (model.cc).
  struct StepRows;
  // Forward checks of run_batch, each naming the sequence.
  void check_batch(std::span<const BatchSequence> batch, bool single) const;
  // The batch's tokens, positions and wanted logit rows, staged on the host and uploaded once.
  StepRows stage_rows(std::span<const BatchSequence> batch);
  // What the blocks share for `T` rows at `positions` (page_table: one sequence's, or null).
  ForwardContext context_for(const int32_t* positions, int64_t T, const int32_t* page_table) const;
  // Every decoder layer over the hidden states `h` [total, hidden], in place.
  void run_decoder_layers(std::span<const BatchSequence> batch, const StepRows& rows, float* h);
  // The wanted rows of `h` through the final norm and lm_head, on the host.
  std::vector<float> logits_of(const float* h, const StepRows& rows);
  // Rank 0: tells the other ranks about a step, a new pool, a freed pool or the end (rank_link.cc).
  void send_step(std::span<const BatchSequence> batch, std::span<const int32_t> dp_rank);
  std::unique_ptr<KvBlockPool> make_pool(int64_t num_blocks, int64_t block_size,
                                         KvDtype dtype) const;

  ModelConfig config_;
  QuantConfig quant_;
  std::unique_ptr<TensorStore> store_;  // the mapping every view points into
  ModelOptions options_;
  const Communicator* comm_ = nullptr;  // null unless there are several ranks
  ParallelPlan plan_;
  ModelConfig local_config_;  // this rank's heads and widths
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<ThreadPool> own_pool_;
  ThreadPool* pool_ = nullptr;
  ActivationQuantPlan act_quant_;
  ModelWeights weights_;
  // One step at a time runs on the backend (its workspace is per step): forward calls from
  // several threads (the engine loop and a test's own generator) are serialized. Under several
  // ranks the same lock orders everything rank 0 sends; pools freed after the model is gone
  // find it closed (rank_link.cc).
  struct Link;
  std::shared_ptr<Link> link_;
  std::map<int64_t, std::unique_ptr<KvBlockPool>> follower_pools_;  // ranks > 0: rank 0's pools
  std::vector<uint64_t> mapped_by_rank_;
  uint64_t huge_page_weight_bytes_ = 0;
  // Host staging of one step's inputs, kept so that steps do not allocate.
  std::vector<int32_t> step_tokens_, step_positions_, step_logit_rows_;
  std::vector<int64_t> step_offsets_;
  std::vector<int> tap_layers_;            // set_hidden_taps
  std::vector<float> taps_, tap_staging_;  // the last step's taps; one layer's rows on the host
};

}  // namespace minimax
