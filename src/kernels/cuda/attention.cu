// CUDA KV store, causal GQA attention over a (paged) KV cache with optional MSA block selection,
// and the MSA block choice (reference/elementwise.cc, attention.cc, msa_block_select.cc).
// Attention runs one block per (query, head) with an online softmax over tiles of slots, in f32
// (the reference sums in double: the results agree to f32 rounding, not bit for bit).
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/cuda_kernels.h"

namespace minimax::cuda {
namespace {

constexpr int kThreads = 128;  // slots per attention tile

__global__ void store_kv_kernel(KvStoreArgs a) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= a.T * a.width) return;
  const int64_t t = i / a.width, c = i % a.width;
  const int64_t index = cache_row(a.page_table, a.page_size, a.positions[t]) * a.width + c;
  const float v = a.rows[i];
  switch (a.dtype) {
    case KvDtype::kF32:
      static_cast<float*>(a.storage)[index] = v;
      break;
    case KvDtype::kBF16:
      static_cast<uint16_t*>(a.storage)[index] = bf16_bits(v);
      break;
    case KvDtype::kFp8E4m3:
      static_cast<uint8_t*>(a.storage)[index] = fp8_kv_code(v);
      break;
  }
}

// Visible slot i of query t, KV group g: slot i when dense; else slot i % block_size of the
// i / block_size-th selected block (only the last selected block, the one holding the query's
// position, can be cut short, so every earlier one is whole).
__device__ int64_t visible_slot(const AttentionArgs& a, const int32_t* blocks, int64_t i) {
  if (blocks == nullptr) return i;
  return int64_t(blocks[i / a.block_size]) * a.block_size + i % a.block_size;
}

__global__ void attention_kernel(AttentionArgs a) {
  extern __shared__ float shared[];
  const int d = a.head_dim;
  float* q = shared;            // [d]
  float* acc = q + d;           // [d]
  float* p = acc + d;           // [kThreads]
  int64_t* rows = reinterpret_cast<int64_t*>(p + kThreads);  // [kThreads]
  const int64_t t = blockIdx.x / a.num_heads;
  const int h = blockIdx.x % a.num_heads, g = h / (a.num_heads / a.num_kv_heads);
  const int64_t pos = a.positions[t];
  const int32_t* blocks = nullptr;
  int64_t visible = pos + 1;
  if (a.block_ids != nullptr) {
    const int groups = a.block_groups > 0 ? a.block_groups : a.num_kv_heads;
    blocks = a.block_ids + (t * groups + a.block_group_begin + g) * a.max_blocks;
    visible = 0;
    for (int b = 0; b < a.max_blocks && blocks[b] >= 0; ++b) {
      const int64_t first = int64_t(blocks[b]) * a.block_size;
      visible += min_i64(first + a.block_size - 1, pos) - first + 1;
    }
  }
  for (int c = threadIdx.x; c < d; c += blockDim.x) {
    q[c] = a.q[(t * a.num_heads + h) * d + c];
    acc[c] = 0.0f;
  }
  __syncthreads();
  float running_max = -INFINITY, denom = 0.0f;
  for (int64_t start = 0; start < visible; start += kThreads) {
    const int64_t i = start + threadIdx.x;
    float score = -INFINITY;
    if (i < visible) {
      const int64_t row = cache_row(a.page_table, a.page_size, visible_slot(a, blocks, i));
      rows[threadIdx.x] = row;
      const int64_t base = row * a.cache_stride + int64_t(g) * d;
      float dot = 0.0f;
      for (int c = 0; c < d; ++c) dot = fmaf(q[c], kv_value(a.k_cache, a.kv_dtype, base + c), dot);
      score = dot * a.scale;
    }
    const float new_max = fmaxf(running_max, block_max(score));
    const float weight = i < visible ? expf(score - new_max) : 0.0f;
    p[threadIdx.x] = weight;
    const float correction = expf(running_max - new_max);  // 0 on the first tile
    denom = denom * correction + block_sum(weight);
    running_max = new_max;
    __syncthreads();
    const int n = static_cast<int>(min_i64(kThreads, visible - start));
    for (int c = threadIdx.x; c < d; c += blockDim.x) {
      float v = acc[c] * correction;
      for (int j = 0; j < n; ++j)
        v = fmaf(p[j], kv_value(a.v_cache, a.kv_dtype, rows[j] * a.cache_stride + int64_t(g) * d + c), v);
      acc[c] = v;
    }
    __syncthreads();
  }
  float* out = a.out + (t * a.num_heads + h) * d;
  for (int c = threadIdx.x; c < d; c += blockDim.x) out[c] = visible > 0 ? acc[c] / denom : 0.0f;
}

__device__ void atomic_max_float(float* address, float value) {
  int* bits = reinterpret_cast<int*>(address);
  int old = *bits;
  while (__int_as_float(old) < value) {
    const int seen = atomicCAS(bits, old, __float_as_int(value));
    if (seen == old) break;
    old = seen;
  }
}

// One block per (query, index head): block scores in shared memory (max over visible slots of
// index_q · index_k), then thread 0 takes the forced blocks and the best others, ties to the lower
// block id, and writes them ascending.
__global__ void select_blocks_kernel(BlockSelectArgs a) {
  extern __shared__ float score[];  // [nblk], then nblk flags: taken
  bool* taken = reinterpret_cast<bool*>(score + (a.positions[blockIdx.x / a.num_index_heads] / a.block_size + 1));
  const int64_t item = blockIdx.x;
  const int64_t t = item / a.num_index_heads;
  const int64_t pos = a.positions[t];
  const int nblk = static_cast<int>(pos / a.block_size) + 1;
  int32_t* out = a.block_ids + item * a.topk_blocks;
  if (nblk <= a.topk_blocks) {
    for (int i = threadIdx.x; i < a.topk_blocks; i += blockDim.x) out[i] = i < nblk ? i : -1;
    return;
  }
  auto forced = [&](int b) { return b < a.init_blocks || b >= nblk - a.local_blocks; };
  for (int b = threadIdx.x; b < nblk; b += blockDim.x) {
    score[b] = -INFINITY;
    taken[b] = false;
  }
  __syncthreads();
  const float* q = a.index_q + item * a.index_dim;
  for (int64_t s = threadIdx.x; s <= pos; s += blockDim.x) {
    const int b = static_cast<int>(s / a.block_size);
    if (forced(b)) continue;
    const int64_t base = cache_row(a.page_table, a.page_size, s) * a.index_k_stride;
    float dot = 0.0f;
    for (int c = 0; c < a.index_dim; ++c)
      dot = fmaf(q[c], kv_value(a.index_k_cache, a.kv_dtype, base + c), dot);
    atomic_max_float(&score[b], dot);
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  int count = 0;
  for (int b = 0; b < nblk && count < a.topk_blocks; ++b)
    if (forced(b)) out[count++] = b;
  while (count < a.topk_blocks) {
    int best = -1;
    for (int b = 0; b < nblk; ++b) {
      if (forced(b) || taken[b]) continue;
      if (best < 0 || score[b] > score[best]) best = b;
    }
    if (best < 0) break;
    out[count++] = best;
    taken[best] = true;
  }
  // Ascending: insertion sort of the chosen ids (at most top-k of them).
  for (int i = 1; i < count; ++i)
    for (int j = i; j > 0 && out[j - 1] > out[j]; --j) {
      const int32_t x = out[j];
      out[j] = out[j - 1];
      out[j - 1] = x;
    }
  for (int i = count; i < a.topk_blocks; ++i) out[i] = -1;
}

}  // namespace

void store_kv(const KvStoreArgs& a, Stream s) {
  const int64_t n = a.T * a.width;
  if (n <= 0) return;
  store_kv_kernel<<<blocks_for(n, 256), 256, 0, as_stream(s)>>>(a);
}

void attention(const AttentionArgs& a, Stream s) {
  if (a.T <= 0) return;
  const size_t shared = (2 * size_t(a.head_dim) + kThreads) * sizeof(float) + kThreads * sizeof(int64_t);
  attention_kernel<<<unsigned(a.T * a.num_heads), kThreads, shared, as_stream(s)>>>(a);
}

void select_blocks(const BlockSelectArgs& a, int64_t max_position, Stream s) {
  if (a.T <= 0) return;
  const size_t shared = size_t(max_position / a.block_size + 1) * (sizeof(float) + sizeof(bool));
  if (shared > 48 * 1024)  // long contexts: past the default dynamic shared memory limit
    cudaFuncSetAttribute(select_blocks_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(shared));
  select_blocks_kernel<<<unsigned(a.T * a.num_index_heads), 256, shared, as_stream(s)>>>(a);
}

}  // namespace minimax::cuda
