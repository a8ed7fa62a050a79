// What the CPU attention ops (attention_cpu.cc) hand to their per-ISA kernels
// (attention_kernels-inl.h, compiled once per level): one job = one token's run of query heads of
// one KV group, or one token's index-score blocks; one attend call takes the jobs of up to
// kAttendTokens tokens over the same cache.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/ops.h"

namespace minimax::cpu_ops_detail {

// Cache slots [begin, end).
struct SlotRange {
  int64_t begin = 0, end = 0;
};

// Slots are processed in tiles of this many: scores for the tile, then one online-softmax update.
// 16 keeps a tile's K and V rows (16 KiB at head_dim 128) in L1 while every head of the group
// reads them (measured: 64 slots 1.6x slower at head_dim 128, 32 slots 1.3x).
constexpr int kAttendTile = 16;

// softmax(q·kᵀ·scale)·v for `heads` consecutive query heads of `groups` consecutive KV heads
// (heads / groups query heads each; KV head i + 1 follows KV head i in a cache row, head_dim
// elements on), over the slots of `ranges` in order. Tiles never straddle two ranges, so the
// arithmetic depends only on the ranges: equal ranges give equal bits, paged or not (a tile that
// crosses a page boundary is gathered into scratch first; tiles inside one page, the usual case,
// are read in place). A bf16 or fp8 cache's tile is decoded into the same scratch (kv_codec.h
// values), then the f32 math runs unchanged (at head_dim 128 the AVX-512 kernel decodes full tiles
// of every cache type in registers instead: the same values, so still the f32 cache's bits).
// Each query head's arithmetic is the same whatever `groups` is: several groups only change the
// order in which memory is read (tile by tile, every group of a row while the row is in cache,
// rather than one group's piece of every row).
struct AttendJob {
  const float* q = nullptr;  // [heads, head_dim]
  float* out = nullptr;      // [heads, head_dim]
  int heads = 0;
  int groups = 1;
  int64_t head_dim = 0;
  const void* k = nullptr;  // slot s of the first KV head at element s·cache_stride, type dtype
  const void* v = nullptr;
  int64_t cache_stride = 0;
  KvDtype dtype = KvDtype::kF32;
  // Optional page table: slot s at row page_table[s / page_size]·page_size + s % page_size.
  const int32_t* page_table = nullptr;
  int64_t page_size = 0;
  const SlotRange* ranges = nullptr;
  int num_ranges = 0;
  float scale = 0;
};
// The most jobs (query tokens) one attend call takes. Each job's state (its heads' output
// accumulators, 3 KiB for six heads at head_dim 128) stays in L1/L2 beside the shared tile.
constexpr int kAttendTokens = 16;
// Floats of scratch attend() needs for `tokens` jobs of `heads` query heads each.
inline int64_t attend_scratch_floats(int heads, int64_t head_dim, int tokens = 1) {
  return int64_t{tokens} * heads * (head_dim + kAttendTile + 2) + 2 * kAttendTile * head_dim;
}

// scores[(b − block_begin)·heads + g] = max over slots s of block b (clipped to [0, last_slot]) of
// the reference's double dot product Σ_c q[g, c]·k_s[c], summed in c order, for each index head g
// of one token; −inf for a block without slots.
struct BlockScoreJob {
  const float* q = nullptr;  // [heads, dim]
  int heads = 0, dim = 0;
  const void* k_cache = nullptr;  // slot s at element row(s)·k_stride, of type dtype
  int64_t k_stride = 0;
  KvDtype dtype = KvDtype::kF32;
  // Optional page table: row(s) = page_table[s / page_size]·page_size + s % page_size, else s.
  const int32_t* page_table = nullptr;
  int64_t page_size = 0;
  int64_t block_size = 0, last_slot = 0;
  int block_begin = 0, block_end = 0;
  double* scores = nullptr;
};
// Doubles of scratch block_scores() needs.
// (A bf16 or fp8 cache's rows are decoded into the last 8·dim doubles, taken as floats.)
inline int64_t block_score_scratch_doubles(int heads, int dim) {
  return int64_t{heads} * dim + 16 * int64_t{heads} + 64 + 8 * int64_t{dim};
}

struct AttentionKernels {
  // jobs[0, count), count ≤ kAttendTokens: query tokens of one sequence over the same cache (k,
  // v, cache_stride, dtype, page table, heads, groups, head_dim and scale equal; q, out and ranges
  // their own). Slot tiles run in ascending order, each read once for every job that has a tile
  // starting there (the K and V rows are fetched from memory once for all of them rather than once
  // per token). A job's tiles, and their order, are those it has alone (each range from its begin
  // in steps of kAttendTile), so each output has the bits of a call with that job only: verifying
  // or prefilling n tokens gives each token its decode's result.
  void (*attend)(const AttendJob* jobs, int count, float* scratch) = nullptr;
  void (*block_scores)(const BlockScoreJob& job, double* scratch) = nullptr;
};

// The visible slots of query t for KV group g as runs of consecutive slots, ascending: [0, pos]
// when dense; else each selected block clipped to [0, pos], a block that starts where the previous
// run ends joining it (so selecting every visible block gives exactly the dense run).
void visible_runs(const AttentionArgs& a, int64_t t, int g, std::vector<SlotRange>& runs);

// The AMX prefill kernel (attention_amx.cc): whether it takes call `a` at level `isa` (dense, 16+
// tokens, a bf16 or fp8 cache, head_dim a multiple of 32 up to 256, a CPU with AMX; dense or
// MSA-selected blocks; the caller asks for it: CpuKernelConfig::amx_attention), and its work
// item: of KV group g, the query tokens
// [16·block, 16·block + 16).
// Built twice, as the AMX linears (linear_internal.h): on the CPU's tiles and on the emulator.
namespace amx_hardware {
bool amx_attention_applies(const AttentionArgs& a, CpuIsa isa);
void amx_attend_block(const AttentionArgs& a, int64_t block, int g);
}  // namespace amx_hardware
namespace amx_emulated {
bool amx_attention_applies(const AttentionArgs& a, CpuIsa isa);
void amx_attend_block(const AttentionArgs& a, int64_t block, int g);
}  // namespace amx_emulated
inline bool amx_attention_applies(const AttentionArgs& a, CpuIsa isa) {
  return amx_emulation() ? amx_emulated::amx_attention_applies(a, isa)
                         : amx_hardware::amx_attention_applies(a, isa);
}
inline void amx_attend_block(const AttentionArgs& a, int64_t block, int g) {
  if (amx_emulation()) return amx_emulated::amx_attend_block(a, block, g);
  amx_hardware::amx_attend_block(a, block, g);
}

const AttentionKernels& attention_kernels_avx512();
const AttentionKernels& attention_kernels_avx2();
const AttentionKernels& attention_kernels_portable();
// The kernels of `isa` (which the CPU must support).
const AttentionKernels& attention_kernels(CpuIsa isa);

}  // namespace minimax::cpu_ops_detail
