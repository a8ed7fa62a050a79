// The CUDA kernels' launchers (the .cu files), called by the CUDA backend (cuda_backend.cc) with
// device pointers; each is queued on `stream` and returns at once. Every launcher computes what
// the reference op of the same name computes (kernels/reference/); where the GPU sums in another
// order or precision, the comment says so. Weights passed here are in device memory (the backend
// uploads them on first use).
#pragma once

#include <cstdint>

#include "kernels/ops.h"

namespace minimax::cuda {

using Stream = void*;  // a cudaStream_t, kept opaque so that host code needs no CUDA headers

void add(float* y, const float* x, int64_t n, Stream s);
void gather_rows(const float* x, int64_t width, const int32_t* rows, int64_t count, float* out,
                 Stream s);
// Token t's slot of expert output rows into its router slot: out[slots[k]] = rows[k], width floats.
void scatter_rows(const float* rows, int64_t width, const int32_t* slots, int64_t count, float* out,
                  Stream s);
// y[t, c] = Σ_j weights[t, j] · slot_out[(t·top_k + j), c], summed in double (reference::moe).
void combine_slots(const float* slot_out, const float* weights, int64_t T, int top_k, int64_t H,
                   float* y, Stream s);
void round_to_bf16(float* x, int64_t n, Stream s);
void glu(const float* gate, const float* up, int64_t n, const GluParams& p, float* out, Stream s);
void quantize_activations(float* x, int64_t rows, int64_t cols, const ActQuant& q, Stream s);

void rms_norm(const float* x, int64_t rows, int64_t dim, const float* weight, float eps,
              bool add_one, float* out, Stream s);
void sum_squares(const float* x, int64_t rows, int64_t dim, float* out, Stream s);
void rms_norm_from_sums(const float* x, int64_t rows, int64_t dim, const float* sum_sq,
                        int64_t full_dim, const float* weight, float eps, bool add_one, float* out,
                        Stream s);
void rope(float* x, int64_t T, const int32_t* positions, const RopeParams& p, Stream s);

void store_kv(const KvStoreArgs& a, Stream s);
void attention(const AttentionArgs& a, Stream s);
// max_position: the largest of the T positions (it sizes the per-query block scores).
void select_blocks(const BlockSelectArgs& a, int64_t max_position, Stream s);
void route(const RouterArgs& a, Stream s);

// A weight in device memory, with the strides the host worked out (weight_view.h).
struct DeviceWeight {
  WeightFormat format = WeightFormat::kF32;
  int64_t rows = 0, cols = 0;
  const uint8_t* data = nullptr;
  const float* scales = nullptr;    // fp8-channel: per row; fp8-block: per tile
  int64_t data_stride = 0;          // bytes from one row to the next
  int64_t scale_stride_floats = 0;  // fp8-block: floats from one tile row of scales to the next
  int block_rows = 128, block_cols = 128;
};
// The weight formats the CUDA linear and embedding take (f32, bf16, fp8-block, fp8-channel).
bool linear_supports(WeightFormat f);
void linear(const DeviceWeight& w, const float* x, int64_t T, float* y, Stream s);
void embedding(const DeviceWeight& table, const int32_t* tokens, int64_t T, float* out, Stream s);

}  // namespace minimax::cuda
