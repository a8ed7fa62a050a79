// Gate/up row interleaving for fused MoE kernels. Checkpoints keep an expert's gate (w1) and up
// (w3) projections as separate tensors, and vLLM's fused w13 concatenates them (all gate rows,
// then all up rows); some fused kernels (Habana's SwiGLU-OAI FP8 MoE, gpt-oss style) read them
// interleaved instead: g0, u0, g1, u1, ... Reading the concatenated layout there gives fluent
// garbage, not an error, so the loader interleaves once, on the raw bytes (any dtype: FP8 codes,
// BF16, packed MXFP4) together with the per-row scales.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace minimax {

// gate and up: `rows` rows of `row_bytes` each. out (2 * rows * row_bytes): row 2i = gate row i,
// row 2i + 1 = up row i. Errors name the argument whose size does not fit.
void interleave_gate_up_rows(std::span<const uint8_t> gate, std::span<const uint8_t> up,
                             size_t row_bytes, std::span<uint8_t> out);

// The same starting from the concatenated layout: w13 holds 2 * rows rows (gate rows first).
void interleave_concatenated_gate_up(std::span<const uint8_t> w13, size_t row_bytes,
                                     std::span<uint8_t> out);

// An expert's fused gate/up projection in the interleaved layout: weight [2I, H] in the source
// dtype (row_bytes per row) and its per-row scales [2I, 1] (scale_bytes per row, e.g. 4 for F32).
struct InterleavedGateUp {
  std::vector<uint8_t> weight;
  std::vector<uint8_t> scales;
};
InterleavedGateUp interleave_expert_gate_up(std::span<const uint8_t> gate_weight,
                                            std::span<const uint8_t> gate_scales,
                                            std::span<const uint8_t> up_weight,
                                            std::span<const uint8_t> up_scales, size_t rows);

}  // namespace minimax
