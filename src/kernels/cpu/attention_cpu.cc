// CPU attention: argument checks, the visible slot runs of each (token, KV group), the split of the
// work across the pool, and the per-ISA kernels of attention_kernels-inl.h (the MSA block choice
// is msa_block_select_cpu.cc).
#include <algorithm>
#include <limits>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/attention_kernels.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/kv_codec.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace cpu_ops_detail {

const AttentionKernels& attention_kernels(CpuIsa isa) {
  if (!cpu_supports(isa))
    fail("cpu attention: this CPU does not support the '{}' kernels", cpu_isa_name(isa));
  switch (isa) {
    case CpuIsa::kAvx512:
      return attention_kernels_avx512();
    case CpuIsa::kAvx2:
      return attention_kernels_avx2();
    case CpuIsa::kScalar:
      break;
  }
  return attention_kernels_portable();
}

void visible_runs(const AttentionArgs& a, int64_t t, int g, std::vector<SlotRange>& runs) {
  runs.clear();
  const int64_t pos = a.positions[t];
  if (a.block_ids == nullptr) {
    if (pos >= 0) runs.push_back({0, pos + 1});
    return;
  }
  const int64_t groups = a.block_groups > 0 ? a.block_groups : a.num_kv_heads;
  const int32_t* blocks = a.block_ids + (t * groups + a.block_group_begin + g) * a.max_blocks;
  for (int i = 0; i < a.max_blocks && blocks[i] >= 0; ++i) {
    const int64_t first = int64_t(blocks[i]) * a.block_size;
    const int64_t end = std::min<int64_t>(first + a.block_size, pos + 1);
    if (first >= end) continue;
    if (!runs.empty() && runs.back().end == first) {
      runs.back().end = end;
    } else {
      runs.push_back({first, end});
    }
  }
}

}  // namespace cpu_ops_detail

namespace {

using cpu_ops_detail::AttendJob;
using cpu_ops_detail::AttentionKernels;
using cpu_ops_detail::BlockScoreJob;
using cpu_ops_detail::SlotRange;
using cpu_ops_detail::visible_runs;

// Runs body(item) for item < items on `parts` threads of the pool, thread p taking items p,
// p + parts, ...: causal items grow with the token index, so striding balances prefill.
template <class Body>
void run_strided(ThreadPool* pool, int64_t items, const Body& body) {
  const int64_t threads = pool == nullptr ? 1 : static_cast<int64_t>(pool->size());
  const int64_t parts = std::min(threads, items);
  if (parts <= 1) {
    for (int64_t i = 0; i < items; ++i) body(i);
    return;
  }
  struct Context {
    const Body* body;
    int64_t items, parts;
  } ctx{&body, items, parts};
  const Context* c = &ctx;
  pool->parallel_for(static_cast<size_t>(parts), [c](size_t begin, size_t end, size_t) {
    for (size_t p = begin; p < end; ++p)
      for (int64_t i = static_cast<int64_t>(p); i < c->items; i += c->parts) (*c->body)(i);
  });
}

// The job of query heads [h0, h1) of token t, which read KV groups [g0, g1), over `runs`.
AttendJob attend_job(const AttentionArgs& a, int64_t t, int h0, int h1, int g0, int g1,
                     const std::vector<SlotRange>& runs) {
  const int64_t d = a.head_dim;
  AttendJob job;
  job.q = a.q + (t * a.num_heads + h0) * d;
  job.out = a.out + (t * a.num_heads + h0) * d;
  job.heads = h1 - h0;
  job.groups = g1 - g0;
  job.head_dim = d;
  job.k = kv_element(a.k_cache, a.kv_dtype, g0 * d);
  job.v = kv_element(a.v_cache, a.kv_dtype, g0 * d);
  job.cache_stride = a.cache_stride;
  job.dtype = a.kv_dtype;
  job.page_table = a.page_table;
  job.page_size = a.page_size;
  job.ranges = runs.data();
  job.num_ranges = static_cast<int>(runs.size());
  job.scale = a.scale;
  return job;
}

// Several query tokens (a prompt chunk, a verify step): a job per token of a block of up to
// kAttendTokens consecutive tokens for one KV group, all of the block's jobs in one attend call,
// so each tile of the group's K and V rows is read from memory once per block rather than once
// per token (a 24-token verify step at 1.5K slots re-read the whole cache for every token). One
// group per call keeps a tile (16 KiB at head_dim 128, f32) in L1 while the block's tokens use it.
// Blocks are as even as the token count allows, and smaller when there are too few of them for
// the threads.
void attend_token_blocks(const AttentionArgs& a, ThreadPool* pool,
                         const AttentionKernels& kernels) {
  const int group = a.num_heads / a.num_kv_heads;
  const int64_t d = a.head_dim;
  const int64_t threads = pool == nullptr ? 1 : static_cast<int64_t>(pool->size());
  int64_t blocks =
      std::max<int64_t>((a.T + cpu_ops_detail::kAttendTokens - 1) / cpu_ops_detail::kAttendTokens,
                        std::min<int64_t>(a.T, (threads + a.num_kv_heads - 1) / a.num_kv_heads));
  const int64_t per_block = (a.T + blocks - 1) / blocks;
  blocks = (a.T + per_block - 1) / per_block;
  run_strided(pool, blocks * a.num_kv_heads, [&](int64_t item) {
    thread_local std::vector<SlotRange> runs_of_slots[cpu_ops_detail::kAttendTokens];
    thread_local std::vector<float> scratch;
    const int64_t t0 = item / a.num_kv_heads * per_block;
    const int64_t t1 = std::min(a.T, t0 + per_block);
    const int g = static_cast<int>(item % a.num_kv_heads);
    AttendJob jobs[cpu_ops_detail::kAttendTokens];
    int count = 0;
    for (int64_t t = t0; t < t1; ++t) {
      std::vector<SlotRange>& runs = runs_of_slots[t - t0];
      visible_runs(a, t, g, runs);
      float* out = a.out + (t * a.num_heads + int64_t{g} * group) * d;
      if (runs.empty()) {  // cannot happen causally; defined as the reference defines it
        std::fill(out, out + group * d, 0.0f);
        continue;
      }
      jobs[count++] = attend_job(a, t, g * group, (g + 1) * group, g, g + 1, runs);
    }
    if (count == 0) return;
    const auto need = static_cast<size_t>(cpu_ops_detail::attend_scratch_floats(group, d, count));
    if (scratch.size() < need) scratch.resize(need);
    kernels.attend(jobs, count, scratch.data());
  });
}

}  // namespace

void cpu_attention_at(const AttentionArgs& a, ThreadPool* pool, CpuIsa isa, bool amx_tiles) {
  reference::check_attention_args(a);
  if (a.head_dim <= 0) fail("attention: head_dim {} must be positive", a.head_dim);
  if (a.T <= 0) return;
  const AttentionKernels& kernels = cpu_ops_detail::attention_kernels(isa);
  if (amx_tiles && cpu_ops_detail::amx_attention_applies(a, isa)) {
    // Blocks of 16 tokens × KV groups, strided over the threads (later blocks see more slots).
    const int64_t blocks = (a.T + 15) / 16;
    run_strided(pool, blocks * a.num_kv_heads, [&](int64_t item) {
      cpu_ops_detail::amx_attend_block(a, item / a.num_kv_heads,
                                       static_cast<int>(item % a.num_kv_heads));
    });
    return;
  }
  if (a.T > 1) {
    attend_token_blocks(a, pool, kernels);
    return;
  }
  const int group = a.num_heads / a.num_kv_heads;
  const int64_t d = a.head_dim;
  const int64_t threads = pool == nullptr ? 1 : static_cast<int64_t>(pool->size());
  // One token (a.T == 1). Dense attention reads every group's piece of each cache row, so a job
  // takes a run of consecutive KV groups and reads their rows once, whole (one group per job read a
  // quarter of each row four times over: 0.6x the speed at 32K slots). Decode splits the groups of
  // its token over the threads; MSA layers select blocks per group, so their jobs keep one group.
  const int64_t group_runs =
      a.block_ids != nullptr ? a.num_kv_heads : std::clamp<int64_t>(threads, 1, a.num_kv_heads);
  // With fewer runs than threads, a group's query heads are split (each part reads the group's
  // K/V rows, from cache after the first).
  const int head_parts =
      group_runs == a.num_kv_heads
          ? static_cast<int>(std::clamp<int64_t>((threads + group_runs - 1) / group_runs, 1, group))
          : 1;
  run_strided(pool, group_runs * head_parts, [&](int64_t item) {
    thread_local std::vector<SlotRange> runs_of_slots;
    thread_local std::vector<float> scratch;
    const int64_t run = item / head_parts;
    const int part = static_cast<int>(item % head_parts);
    const int g0 = static_cast<int>(a.num_kv_heads * run / group_runs);
    const int g1 = static_cast<int>(a.num_kv_heads * (run + 1) / group_runs);
    const int h0 = g0 * group + (g1 - g0) * group * part / head_parts;
    const int h1 = g0 * group + (g1 - g0) * group * (part + 1) / head_parts;
    float* out = a.out + h0 * d;
    visible_runs(a, 0, g0, runs_of_slots);  // the same for every group of a dense run
    if (runs_of_slots.empty()) {  // cannot happen causally; defined as the reference defines it
      std::fill(out, out + (h1 - h0) * d, 0.0f);
      return;
    }
    const AttendJob job = attend_job(a, 0, h0, h1, g0, g1, runs_of_slots);
    const auto need = static_cast<size_t>(cpu_ops_detail::attend_scratch_floats(job.heads, d));
    if (scratch.size() < need) scratch.resize(need);
    kernels.attend(&job, 1, scratch.data());
  });
}

void cpu_attention(const AttentionArgs& args, ThreadPool* pool) {
  cpu_attention_at(args, pool, default_cpu_isa());
}

}  // namespace minimax
