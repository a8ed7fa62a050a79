// Every weight of an M2 / M3 model as the kernels read it: WeightViews straight into the mapped
// checkpoint (any of the five layouts, no dequantization of the big matrices), plus small f32
// vectors (norms, router bias) converted at load.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/model_config.h"
#include "checkpoint/quant_config.h"
#include "formats/tensor_store.h"
#include "kernels/ops.h"
#include "parallel/parallel_mode.h"

namespace minimax {

struct FfnWeights {  // a dense FFN (M3 layers 0-2) or the M3 shared expert
  WeightView gate, up, down;
};

struct AttentionWeights {
  WeightView q, k, v, o;
  std::vector<float> q_norm, k_norm;  // empty without QK norm
  // MSA index branch, on sparse layers only.
  WeightView index_q, index_k;
  std::vector<float> index_q_norm, index_k_norm;
};

struct MoeWeights {
  WeightView router;        // [num_experts, hidden], F32 in the releases
  std::vector<float> bias;  // e_score_correction_bias, empty when use_routing_bias is off
  std::vector<ExpertWeights> experts;
  bool has_shared = false;
  FfnWeights shared;
};

struct LayerWeights {
  std::vector<float> input_norm, post_norm;
  AttentionWeights attn;
  bool sparse = false;  // MSA index branch + block-sparse attention
  bool moe = false;     // MoE (else the dense FFN)
  FfnWeights dense;
  MoeWeights moe_weights;
};

struct LoadOptions {
  // The "dequant" MoE path: routed and shared experts decoded to bf16 at load (2 bytes per
  // weight, owned), run with bf16 activations. Settles any doubt about a quantized kernel.
  bool dequant_experts = false;
  // This rank's share (docs/parallel.md): split weights are cut to it, and routed experts other
  // ranks hold are not read at all (their ExpertWeights stay empty).
  ParallelPlan plan;
};

struct ModelWeights {
  WeightView embedding;  // [vocab, hidden]
  std::vector<LayerWeights> layers;
  std::vector<float> final_norm;
  WeightView lm_head;  // the embedding when tie_word_embeddings; this rank's vocabulary rows
  // lm_head rows [vocab_begin, vocab_begin + lm_head.rows) of the whole vocabulary (vocab_size).
  int64_t vocab_begin = 0, vocab_size = 0;
  QuantScheme scheme = QuantScheme::kNone;
  bool dequant_experts = false;
  // Bytes the views point at that are not in the mapping (converted scales, dequantized experts,
  // realigned tensors). Vectors keep their buffer when moved, so views stay valid.
  std::vector<std::vector<uint8_t>> owned;
  uint64_t mapped_bytes = 0;  // checkpoint bytes this rank's weights read (its share)
  // The code bytes of every weight view counted in mapped_bytes (strided views: first row to
  // last), for prefault_weights.
  std::vector<std::span<const uint8_t>> kept;
};

// Loads every tensor of the canonical table (checkpoint/tensor_table.h) from `store`, in the layout
// `quant` describes; MTP and vision tensors are never touched. Errors name the tensor: a missing
// one, a dtype or shape that differs from the layout, a malformed scale.
ModelWeights load_model_weights(const TensorStore& store, const ModelConfig& config,
                                const QuantConfig& quant, const LoadOptions& options);

// Reads every kept weight in (base/mapped_file.h touch_pages), so that the first forward pass
// does not stall on page faults; with `show_progress`, a progress bar on stderr (for loads that
// take more than a second: a checkpoint read from disk).
void prefault_weights(const ModelWeights& weights, bool show_progress);

// Whether to read the weights in at load: not when they are more than the memory available
// (`available_bytes`, 0 when unknown), where reading them all would only evict the first pages to
// make room for the last (issue 39: a 230 GB model on a smaller host); they then stream in from
// the checkpoint as the forward pass reads them.
bool should_prefault(uint64_t weight_bytes, int64_t available_bytes);

// Moves the kept weights that lie in `store`'s file mappings into transparent huge pages
// (base/huge_pages.h), reading them in on the way; with `show_progress`, a progress bar. Returns
// the bytes moved (whole 2 MiB blocks: a few MB of each shard's ends stay in the mapping).
uint64_t move_weights_to_huge_pages(const ModelWeights& weights, const TensorStore& store,
                                    bool show_progress);
uint64_t kept_bytes(const ModelWeights& weights);

}  // namespace minimax
