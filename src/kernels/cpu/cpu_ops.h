// The CPU backend's ops other than linear: f32 attention (online softmax, GQA, MSA blocks), exact
// MSA block scores, grouped MoE over cpu_linear, RMSNorm, RoPE, router, gated activations and
// embedding. Each has the kernels/ops.h signature and means what its kernels/reference/ op means;
// docs/cpu_kernels.md states how close each one is to the reference.
#pragma once

#include <cstdint>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/linear.h"
#include "kernels/ops.h"
#include "kernels/reference/moe_plan.h"

namespace minimax {

// y += x, the calling thread alone below 64K values (bit-identical to the reference: one f32 add
// per element).
void cpu_add(float* y, const float* x, int64_t n, ThreadPool* pool);

// Rows of the table decoded to f32 (f32 and bf16 directly, other formats with the exact row
// decoder of the reference); the same Error as the reference for a token outside the table.
void cpu_embedding(const WeightView& table, const int32_t* tokens, int64_t T, float* out);

// Sum of squares in double (8 partial sums), scaling in double, rounded to f32 once: within 3 f32
// roundings of the reference per element. On AVX-512 the partial sums are a vector's lanes: the
// same bits.
void cpu_rms_norm(const float* x, int64_t rows, int64_t dim, const float* weight, float eps,
                  bool add_one, float* out, ThreadPool* pool);
// The same with the kernel of a given ISA level (AVX2 runs the portable loop); Error if the CPU
// does not support it.
void cpu_rms_norm_at(const float* x, int64_t rows, int64_t dim, const float* weight, float eps,
                     bool add_one, float* out, ThreadPool* pool, CpuIsa isa);

// Bit-identical to the reference (same f32 angle, cos and sin in double, rotation in double), with
// the inverse frequencies computed once per call and cos/sin once per (token, pair).
void cpu_rope(float* x, int64_t T, const int32_t* positions, const RopeParams& params,
              ThreadPool* pool);

// Bit-identical to the reference (the same double scores, the same order of the top-k choice,
// ties to the lower expert id), choosing by insertion instead of sorting every expert.
void cpu_route(const RouterArgs& args);

// Within a few f32 roundings of the reference per element: on AVX-512 in double, eight lanes at
// a time (the exact result rounded once, up to ~1e-15 from the exponential), else f32 with
// std::exp.
void cpu_glu(const float* gate, const float* up, int64_t n, const GluParams& params, float* out);
// The same with the kernel of a given ISA level (AVX2 runs the portable loop); Error if the CPU
// does not support it.
void cpu_glu_at(const float* gate, const float* up, int64_t n, const GluParams& params, float* out,
                CpuIsa isa);

// f32 attention: SIMD dot products over head_dim, online softmax over tiles of slots with a
// vectorised exp, the query heads of a KV group sharing each K/V row. Slots are visited in the same
// order in dense and block-sparse calls (adjacent selected blocks merge into one run), so selecting
// every visible block gives the dense result bit for bit. Results do not depend on the pool size.
void cpu_attention(const AttentionArgs& args, ThreadPool* pool);

// MSA block choice with the reference's exact scores: each dot product is the reference's
// sequential double sum (vectorised across slots, not across dimensions), so the chosen blocks are
// the reference's, ties included.
void cpu_select_blocks(const BlockSelectArgs& args, ThreadPool* pool);

// The same two ops with the kernels of a given ISA level (tests compare the levels); Error if the
// CPU does not support it.
// `amx_tiles`: prefill calls that can may run on AMX tiles with split bf16 Q and K
// (CpuKernelConfig::amx_attention; attention_kernels.h amx_attention_applies).
void cpu_attention_at(const AttentionArgs& args, ThreadPool* pool, CpuIsa isa,
                      bool amx_tiles = false);
void cpu_select_blocks_at(const BlockSelectArgs& args, ThreadPool* pool, CpuIsa isa);

// Grouped MoE: tokens gathered per expert (plan as reference/moe_plan.h), every active expert's
// gate and up run over its tokens with cpu_linear, the activation in f32, then down, and the
// results added into y with the routing weights. Each expert's weights stream once per call (per
// 128 tokens of an expert): the threads split every projection's output rows, all active experts in
// one pool call per phase (gate/up, then down). Scratch is reused across calls. The projections
// run with `linear`'s ISA level and activation precision (f32 by default); results do not depend
// on the pool size.
void cpu_moe(const MoeArgs& args, ThreadPool* pool, const CpuLinearOptions& linear = {});

}  // namespace minimax
