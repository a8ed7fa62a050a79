// What the CPU linear dispatcher (linear.cc) and the per-format kernels (linear_<format>.cc) share:
// the job description and the kernel descriptor each format file hands out per ISA level.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/cpu/cpu_features.h"
#include "kernels/weight_view.h"

namespace minimax::cpu_linear_detail {

// Per-thread scratch that grows to the largest call seen and is then reused: no allocation in the
// step loop once the shapes have been seen.
struct AlignedScratch {
  std::unique_ptr<uint8_t[]> storage;
  size_t capacity = 0;
  void* get(size_t bytes) {
    if (bytes + 64 > capacity) {
      capacity = bytes + 64;
      storage.reset(new uint8_t[capacity]);
    }
    const auto address = reinterpret_cast<uintptr_t>(storage.get());
    return storage.get() + ((64 - address % 64) % 64);
  }
};

// One call of cpu_linear, read by every thread.
struct LinearJob {
  const WeightView* w = nullptr;
  // Activations prepared by the dispatcher in the kernel's column order (RowKernel::order), each
  // token row zero-padded to a whole number of chunks: f32, or bf16 bits when RowKernel::bf16_x;
  // with RowKernel::split_x each chunk's hi halves, then its lo halves.
  const void* x = nullptr;
  int64_t x_stride = 0;  // elements per prepared token row (twice the padded width when split)
  // Tokens of this job; they share each pass over a weight row. The dispatcher cuts larger
  // batches into jobs whose activations fit in L2.
  int64_t tokens = 0;
  float* y = nullptr;  // [tokens, rows], row stride w->rows
};

// Computes y for rows [row_begin, row_end) and every token of the job.
using RowRangeFn = void (*)(const LinearJob& job, int64_t row_begin, int64_t row_end);

struct RowKernel {
  RowRangeFn run = nullptr;  // null: this format has no kernel at this level for this view
  int chunk_cols = 1;        // columns decoded per step; x rows are padded to a multiple of it
  // order[p] = the column (within a chunk) whose activation the kernel reads at position p, the
  // order the SIMD decode leaves weights in; null = natural order.
  const uint16_t* order = nullptr;
  bool bf16_x = false;   // activations as bf16 bits (vdpbf16ps kernels)
  bool split_x = false;  // bf16_x as hi + lo pairs (ActivationPrecision::kBF16x2)
};

// Whether a row kernel's tile takes rows a quarter (one token) or a half (several) of its range
// apart, each stream of the tile walking its own part of the weight in address order, rather
// than adjacent rows. Decoders that do more work per byte (FP8, FP4) gain where rows are a few
// KB (docs/cpu_kernels.md, "Tiles"); f32 and most bf16 decoders, which keep up with adjacent rows,
// set kRowsApart = RowsApart::kNo. The AVX-512 bf16 decoder with f32 activations (what bf16 weights
// take under the default bf16x2) goes apart on CPUs without AMX: on AMD Zen 4 that decoded the
// bf16 benchmark shape 1.17-1.18x faster, on the Intel Xeon with AMX 0.93-0.97x (its streams
// start cold in every matrix). The tiles, not the bits, change.
enum class RowsApart { kNo, kYes, kWithoutAmx };
template <class D>
bool rows_apart() {
  if constexpr (requires { D::kRowsApart; }) {
    if constexpr (D::kRowsApart == RowsApart::kWithoutAmx) return !cpu_features().amx_bf16;
    return D::kRowsApart == RowsApart::kYes;
  } else {
    return true;
  }
}

// The tiles of `per_tile` rows over rows [begin, end): tile i holds rows first(i) + k · step
// (k < per_tile), `tiles` of them, then rows [rest(), end) one by one. Apart: step = tiles.
struct TileRows {
  int64_t begin, per_tile, tiles, step;
  TileRows(int64_t begin_, int64_t end, int64_t per_tile_, bool apart)
      : begin(begin_),
        per_tile(per_tile_),
        tiles((end - begin_) / per_tile_),
        step(apart ? tiles : 1) {}
  int64_t first(int64_t i) const { return begin + (step == 1 ? per_tile * i : i); }
  int64_t rest() const { return begin + per_tile * tiles; }
};

// The summation order every f32-activation kernel of bf16, FP8 and MXFP4 weights follows at one
// ISA level, so that two checkpoints holding the same decoded weights in those layouts (an MXFP4
// expert and its exact FP8 conversion, an MXFP4 shared expert and its BF16 copy) give bit-identical
// outputs: the columns go in groups of kGroup (32 on AVX-512, 16 on AVX2), each group as one
// vector of its even columns, then one of its odd columns (lane l: columns 2l and 2l + 1);
// AVX-512 sums the even vectors into one accumulator and the odd into another, AVX2 all into one;
// scales finer than a row multiply the decoded weights (exact for the e8m0 powers of two), a
// row's scale the final sum. This is the activation order of such a chunk of kChunk columns.
// (FP8 tiles and MXFP8 blocks scale partial sums, NVFP4 keeps its own order: neither is part of
// the guarantee.)
template <int kChunk, int kGroup>
const uint16_t* even_odd_order() {
  static_assert(kChunk % kGroup == 0 && kGroup % 2 == 0);
  static const auto order = [] {
    std::array<uint16_t, kChunk> o{};
    for (int g = 0; g < kChunk; g += kGroup)
      for (int p = 0; p < kGroup / 2; ++p) {
        o[g + p] = static_cast<uint16_t>(g + 2 * p);
        o[g + kGroup / 2 + p] = static_cast<uint16_t>(g + 2 * p + 1);
      }
    return o;
  }();
  return order.data();
}

// The f32-activation kernel of each format at `isa` (kAvx2 / kAvx512); run is null where the level
// has none for this view (the caller then uses the scalar kernel).
RowKernel f32_kernel(CpuIsa isa);
RowKernel bf16_kernel(CpuIsa isa);
RowKernel fp8_kernel(CpuIsa isa, const WeightView& w);
RowKernel mxfp4_kernel(CpuIsa isa);
RowKernel nvfp4_kernel(CpuIsa isa);
// The bf16-activation (vdpbf16ps) kernel for `w`, AVX-512 + AVX512_BF16 only, with the
// activations rounded to bf16 or (split) as hi + lo bf16 pairs; run is null for formats without
// one (f32 weights) or views it cannot take.
RowKernel bf16x_kernel(const WeightView& w, bool split);
// The batch kernel (linear_gemm.cc, AVX-512 + AVX512_BF16): y rows [row_begin, row_end) of every
// token, from the caller's f32 x [tokens, cols] (any alignment) and y [tokens, w.rows]. It rounds
// the activations to bf16 itself (for FP8 tiles each one times its tile's scale).
using GemmRowsFn = void (*)(const WeightView& w, const float* x, int64_t tokens, float* y,
                            int64_t row_begin, int64_t row_end);
// Null for formats without one. split: the activations as bf16 hi + lo (kBF16x2).
GemmRowsFn gemm_bf16_kernel(const WeightView& w, bool split);
// The batch kernel with f32 activations (linear_gemm_f32-inl.h), per ISA level: exact products,
// f32 sums in one order for every layout. Null where the level has none for this view.
namespace gemm_f32_avx2 {
GemmRowsFn gemm_f32_kernel(const WeightView& w);
}
namespace gemm_f32_avx512 {
GemmRowsFn gemm_f32_kernel(const WeightView& w);
}
inline GemmRowsFn gemm_f32_kernel(const WeightView& w, CpuIsa isa) {
  return isa == CpuIsa::kAvx512 ? gemm_f32_avx512::gemm_f32_kernel(w)
         : isa == CpuIsa::kAvx2 ? gemm_f32_avx2::gemm_f32_kernel(w)
                                : nullptr;
}
// The AMX kernels, built twice: on the CPU's tiles (amx_hardware) and on the tile emulator
// (amx_emulated, amx_emulation-inl.h). gemm_amx_kernel and amx_row_kernel below pick the one this
// process uses (cpu_features.h amx_emulation).
namespace amx_hardware {
GemmRowsFn gemm_amx_kernel(const WeightView& w, bool split);
RowKernel amx_row_kernel(const WeightView& w, bool split);
}  // namespace amx_hardware
namespace amx_emulated {
GemmRowsFn gemm_amx_kernel(const WeightView& w, bool split);
RowKernel amx_row_kernel(const WeightView& w, bool split);
}  // namespace amx_emulated
// The batch GEMM on AMX tiles (linear_amx.cc; the caller checks CpuLinearOptions::amx): every
// format but f32, and FP8 tiles whose width is a multiple of 16. Null for the others.
inline GemmRowsFn gemm_amx_kernel(const WeightView& w, bool split) {
  return amx_emulation() ? amx_emulated::gemm_amx_kernel(w, split)
                         : amx_hardware::gemm_amx_kernel(w, split);
}
// The AMX row kernel (linear_amx_rows.cc) for `w`, bf16 (split: hi + lo) activations: FP8 tiles
// a multiple of 64 columns wide and FP8 per channel; run is null for the others. The caller checks
// amx_usable().
inline RowKernel amx_row_kernel(const WeightView& w, bool split) {
  return amx_emulation() ? amx_emulated::amx_row_kernel(w, split)
                         : amx_hardware::amx_row_kernel(w, split);
}
// The activations of a bf16_x kernel k (AVX-512 + AVX512_BF16): x [tokens, cols] -> out, per
// token `stride` (cols padded to whole chunks) bf16 in k's column order, zero-padded; with
// k.split_x 2 · stride: per chunk the hi halves, then the lo halves (linear_prepare.cc).
void prepare_bf16_activations(const RowKernel& k, const float* x, int64_t tokens, int64_t cols,
                              int64_t stride, uint16_t* out);
// The activations of an f32 row kernel k with a column order (chunks of 16, 32, 64 or 128) on a
// CPU with AVX-512: x [tokens, cols] -> out, per token `stride` floats in k's order, zero-padded.
void prepare_f32_activations(const RowKernel& k, const float* x, int64_t tokens, int64_t cols,
                             int64_t stride, float* out);
// Portable kernel for every format and shape (f32 activations, natural order).
RowKernel scalar_kernel();

// Lookup tables shared by the decoders, built once from the scalar reference codecs of formats/.
struct DecodeTables {
  // e4m3fn code & 0x7F -> low / high byte of its bf16 bits (every e4m3fn value, subnormals and
  // the NaN code included, is exactly a bf16; the sign is bit 7 of the code and of the high byte).
  alignas(64) uint8_t e4m3_bf16_lo[128];
  alignas(64) uint8_t e4m3_bf16_hi[128];
  alignas(64) float e4m3[256];  // e4m3fn code -> value
  alignas(64) float e8m0[256];  // e8m0 code -> 2^(code-127); 0xFF -> NaN
  alignas(64) float e2m1[16];   // e2m1 nibble -> value
  // e2m1 nibble -> low / high byte of its bf16 bits (sign included)
  alignas(16) uint8_t e2m1_bf16_lo[16];
  alignas(16) uint8_t e2m1_bf16_hi[16];
};
const DecodeTables& decode_tables();

}  // namespace minimax::cpu_linear_detail
