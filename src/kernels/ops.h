// Backend-neutral kernel signatures: the ops the model is written against. Every pointer an op
// takes (activations, token ids, positions, page tables, KV storage) is memory of the backend that
// runs it (kernels/backend.h: host memory for reference/ and cpu/, device memory for an
// accelerator's); activations are f32 and row-major; weights are WeightViews in their stored
// format. A backend is a KernelOps table of these functions plus the memory it owns. Every op's
// meaning is defined by its reference version in kernels/reference/.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/weight_view.h"

namespace minimax {

// ---- Linear and embedding -------------------------------------------------------------------

// y[t, :] = W · x[t, :] for t < T. x: [T, w.cols], y: [T, w.rows]. `pool` may be null (one thread).
using LinearFn =
    std::function<void(const WeightView& w, const float* x, int64_t T, float* y, ThreadPool* pool)>;

// out[t, :] = row tokens[t] of `table` (an embedding matrix in any WeightFormat), decoded to f32.
// Throws Error naming the token when it is outside [0, table.rows).
using EmbeddingFn =
    std::function<void(const WeightView& table, const int32_t* tokens, int64_t T, float* out)>;

// ---- Norms and position encoding ------------------------------------------------------------

// For each of `rows` rows of `dim` values: out = x · rsqrt(mean(x²) + eps) · g, with g = weight
// (plain) or 1 + weight (Gemma, `add_one`). weight: f32 [dim]. `out` may equal `x`.
// Over a whole projection (M2's cross-head QK norm: rows = T, dim = heads·head_dim) or per head
// (M3: rows = T·heads, dim = head_dim, one weight shared by every head).
using RmsNormFn = std::function<void(const float* x, int64_t rows, int64_t dim, const float* weight,
                                     float eps, bool add_one, float* out, ThreadPool* pool)>;
// The two halves of rms_norm for a row split across ranks (M2's cross-head QK norm under tensor
// parallelism): sum_squares writes out[r] = Σ_i x[r, i]² of this rank's `dim` values; after the
// caller sums those over ranks, rms_norm_from_sums normalises with mean = sum_sq[r] / full_dim
// (`out` may equal `x`; weight: this rank's [dim] share).
using SumSquaresFn = std::function<void(const float* x, int64_t rows, int64_t dim, float* out)>;
using RmsNormFromSumsFn =
    std::function<void(const float* x, int64_t rows, int64_t dim, const float* sum_sq,
                       int64_t full_dim, const float* weight, float eps, bool add_one, float* out)>;

struct RopeParams {
  int num_heads = 0;   // heads per token row of `x`
  int head_dim = 0;    // row stride between heads
  int rotary_dim = 0;  // dims [0, rotary_dim) rotate, the rest pass through
  double theta = 0;    // inv_freq[i] = theta^(-2i / rotary_dim), normalised by rotary_dim
};
// NeoX (rotate-half) partial RoPE in place on x [T, num_heads, head_dim]: for j < rotary_dim/2,
// (x_j, x_{j+r/2}) ← (x_j·cos − x_{j+r/2}·sin, x_{j+r/2}·cos + x_j·sin) with angle
// positions[t]·inv_freq[j]. The angle follows the f32 convention of HF and vLLM: inv_freq is an
// f32, the product position·inv_freq is rounded to f32 (reference/norm_rope.cc says exactly how).
using RopeFn = std::function<void(float* x, int64_t T, const int32_t* positions,
                                  const RopeParams& params, ThreadPool* pool)>;

// ---- Elementwise and data movement ------------------------------------------------------------
// The model does no arithmetic or copying on activations itself: residual adds, row selection and
// KV stores are ops, so that an accelerator backend keeps activations in its own memory.

// y[i] += x[i] for i < n (the residual add).
using AddFn = std::function<void(float* y, const float* x, int64_t n, ThreadPool* pool)>;
// y[i] = x[i] for i < n.
using CopyFn = std::function<void(float* y, const float* x, int64_t n)>;
// out[i, :] = x[rows[i], :] for i < count, rows of `width` floats.
using GatherRowsFn = std::function<void(const float* x, int64_t width, const int32_t* rows,
                                        int64_t count, float* out)>;

// Element type of the KV cache's storage; what each type stores and reads back is kv_codec.h
// (bf16 round to nearest even; fp8 e4m3fn with a per-tensor scale of 1.0, saturating at ±448).
enum class KvDtype : uint8_t { kF32, kBF16, kFp8E4m3 };
std::string_view kv_dtype_name(KvDtype dtype);  // "f32", "bf16", "fp8_e4m3"
int64_t kv_dtype_bytes(KvDtype dtype);

struct KvStoreArgs {
  const float* rows = nullptr;  // [T, width]: this step's keys, values or index keys
  int64_t T = 0, width = 0;
  const int32_t* positions = nullptr;  // row t goes to slot positions[t]
  // Slot s is storage row page_table[s / page_size]·page_size + s % page_size (null: row s).
  const int32_t* page_table = nullptr;
  int page_size = 0;
  void* storage = nullptr;  // [rows, width] elements of `dtype`
  KvDtype dtype = KvDtype::kF32;
};
// Writes each row to its slot's storage row, converted to the cache's element type.
using StoreKvFn = std::function<void(const KvStoreArgs& args)>;

// ---- Attention ------------------------------------------------------------------------------

struct AttentionArgs {
  const float* q = nullptr;  // [T, num_heads, head_dim], after norm and RoPE
  int64_t T = 0;
  int num_heads = 0, num_kv_heads = 0, head_dim = 0;  // query head h reads KV head h / group
  // Cache: token slot s of KV head g starts at element s·cache_stride + g·head_dim of k_cache /
  // v_cache, whose elements are `kv_dtype`.
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  int64_t cache_stride = 0;
  KvDtype kv_dtype = KvDtype::kF32;
  // Query t attends cache slots [0, positions[t]] (causal).
  const int32_t* positions = nullptr;
  float scale = 0;  // softmax scale, 1/sqrt(head_dim)
  // Optional MSA block selection: [T, num_kv_heads, max_blocks] block ids ascending, -1 padded;
  // query heads of KV group g only see slots in the blocks selected for (t, g). Null = dense.
  const int32_t* block_ids = nullptr;
  int max_blocks = 0, block_size = 0;
  // When block_ids holds more KV groups per token than this call's heads read (a rank holding
  // some KV heads under tensor parallelism): block_groups per token row (0 = num_kv_heads), this
  // call's group g at row entry block_group_begin + g.
  int block_groups = 0, block_group_begin = 0;
  // Optional paged cache: when set, slot s is at row page_table[s / page_size]·page_size +
  // s % page_size of k_cache / v_cache (the offsets above apply to rows); null = row s. Block ids
  // stay logical (slot / block_size).
  const int32_t* page_table = nullptr;
  int page_size = 0;
  float* out = nullptr;  // [T, num_heads, head_dim]
};
// softmax(q·kᵀ·scale) · v per query head over the visible slots. When every visible block is
// selected the result is bit-identical to the dense call (same slots, same order).
using AttentionFn = std::function<void(const AttentionArgs& args, ThreadPool* pool)>;

struct BlockSelectArgs {
  const float* index_q = nullptr;  // [T, num_index_heads, index_dim], after norm and RoPE
  int64_t T = 0;
  int num_index_heads = 0, index_dim = 0;  // index head g selects for KV group g
  const void* index_k_cache = nullptr;     // slot s at element s·index_k_stride, `kv_dtype`
  int64_t index_k_stride = 0;
  KvDtype kv_dtype = KvDtype::kF32;
  const int32_t* positions = nullptr;  // query t sees slots [0, positions[t]]
  int block_size = 0, topk_blocks = 0;
  int init_blocks = 0;   // blocks [0, init_blocks) always selected
  int local_blocks = 1;  // the last local_blocks visible blocks always selected
  // Optional paged cache, as in AttentionArgs: slot s at row page_table[s / page_size]·page_size
  // + s % page_size of index_k_cache; null = row s. Block ids are logical.
  const int32_t* page_table = nullptr;
  int page_size = 0;
  int32_t* block_ids = nullptr;  // out: [T, num_index_heads, topk_blocks], ascending, -1 padded
};
// MSA block choice per (query t, index head g): score(b) = max over visible slots j in block b of
// index_q[t,g] · index_k[j]. With nblk = positions[t]/block_size + 1 ≤ topk_blocks every block is
// selected (the attention is then exactly dense); otherwise the forced blocks plus the best of the
// others by score, ties to the lower block id.
using BlockSelectFn = std::function<void(const BlockSelectArgs& args, ThreadPool* pool)>;

// ---- MoE --------------------------------------------------------------------------------------

struct RouterArgs {
  const float* logits = nullptr;  // [T, num_experts]: the gate projection, f32
  int64_t T = 0;
  int num_experts = 0, top_k = 0;
  const float* selection_bias = nullptr;  // [num_experts] added for the choice only; may be null
  bool renormalize = true;                // weights = s / Σ s over the chosen experts
  float routed_scale = 1.0f;              // multiplies every routing weight (M3: 2.0)
  int32_t* expert_ids = nullptr;          // out: [T, top_k], by choice score descending
  float* expert_weights = nullptr;        // out: [T, top_k]
};
// s = sigmoid(logits); choose top_k of s + bias (ties to the lower expert id); weight = s (the
// unbiased score), renormalised, times routed_scale.
using RouterFn = std::function<void(const RouterArgs& args)>;

enum class GluKind : uint8_t {
  kSilu,       // silu(g) · u
  kSwigluOai,  // g' = min(g, limit); g'·sigmoid(alpha·g')·(clamp(u, ±limit) + beta)
};
struct GluParams {
  GluKind kind = GluKind::kSilu;
  float alpha = 1.702f, limit = 7.0f, beta = 1.0f;  // kSwigluOai only
};
// out[i] = act(gate[i], up[i]) for i < n. `out` may equal `gate` or `up`.
using GluFn = std::function<void(const float* gate, const float* up, int64_t n,
                                 const GluParams& params, float* out)>;

// Emulation of dynamic FP8 (e4m3fn) activation quantization: values are replaced by
// code·scale, as an accelerator runtime would feed its FP8 GEMM.
enum class ActQuantKind : uint8_t {
  kNone,
  kFp8PerToken,    // one scale per row: amax(row) / fp8_max (compressed-tensors dynamic token)
  kFp8Group,       // one scale per `group` values of a row (block FP8: 1×128)
  kFp8FixedScale,  // one fixed scale (the fused FP8 MoE's 56/fp8_max after SwiGLU-OAI)
};
struct ActQuant {
  ActQuantKind kind = ActQuantKind::kNone;
  int group = 128;
  float fixed_scale = 0;
  float fp8_max = 448.0f;  // 448 for OCP e4m3fn, 240 for Gaudi 2's window
};
// In place on x [rows, cols].
using QuantizeActivationsFn =
    std::function<void(float* x, int64_t rows, int64_t cols, const ActQuant& q)>;

// One routed expert: gate (w1) [inter, hidden], up (w3) [inter, hidden], down (w2) [hidden, inter].
struct ExpertWeights {
  WeightView gate, up, down;
};

struct MoeArgs {
  const ExpertWeights* experts = nullptr;  // [num_experts]
  int num_experts = 0;
  int64_t hidden = 0, inter = 0;
  const float* x = nullptr;  // [T, hidden]
  int64_t T = 0;
  const int32_t* expert_ids = nullptr;    // [T, top_k] from the router
  const float* expert_weights = nullptr;  // [T, top_k]
  int top_k = 0;
  GluParams act;
  ActQuant down_input_quant;      // applied to the activation output before the down projection
  bool bf16_activations = false;  // the dequant path: every expert activation rounded to bf16
  float* y = nullptr;             // out: [T, hidden] = Σ_j weight[t,j] · expert_{id[t,j]}(x[t])
  // The experts this call runs (expert parallelism: the ones this rank holds): slots whose id is
  // outside [expert_begin, expert_end) contribute nothing; their entries of `experts` are not
  // read. expert_end < 0 means num_experts.
  int expert_begin = 0, expert_end = -1;
};
// Grouped MoE: the tokens routed to each expert are gathered, each expert runs once over its
// tokens (gate and up over x, activation, down), and the results are scattered back, scaled by
// the routing weights. An expert's weights are streamed once per call however many tokens chose
// it (reference/moe_plan.h builds the per-expert token lists).
using MoeFn = std::function<void(const MoeArgs& args, ThreadPool* pool)>;

// ---- The table --------------------------------------------------------------------------------

// One backend's ops. Entries are functions, so that a backend can bind its own configuration (the
// CPU backend's ISA level and activation precision) instead of reading process-wide state. An
// empty entry means "not provided": a host backend (kernels/backend.h) has it filled from the
// reference, and `from_reference` lists those; a device backend must provide every entry.
struct KernelOps {
  const char* name = "";
  std::vector<std::string_view> from_reference;  // op names filled by complete_with_reference
  AddFn add = nullptr;
  CopyFn copy = nullptr;
  GatherRowsFn gather_rows = nullptr;
  StoreKvFn store_kv = nullptr;
  LinearFn linear = nullptr;
  EmbeddingFn embedding = nullptr;
  RmsNormFn rms_norm = nullptr;
  SumSquaresFn sum_squares = nullptr;
  RmsNormFromSumsFn rms_norm_from_sums = nullptr;
  RopeFn rope = nullptr;
  AttentionFn attention = nullptr;
  BlockSelectFn select_blocks = nullptr;
  RouterFn route = nullptr;
  GluFn glu = nullptr;
  QuantizeActivationsFn quantize_activations = nullptr;
  MoeFn moe = nullptr;
};

}  // namespace minimax
