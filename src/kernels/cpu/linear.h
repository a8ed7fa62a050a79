// The CPU backend's linear layer: y[t, :] = W · x[t, :] for every WeightFormat, reading W in its
// stored format (no dequantized copy), SIMD (AVX-512 or AVX2, chosen at run time) and threaded
// over output rows. docs/cpu_kernels.md describes the layouts, numerics and measured speed.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/thread_pool.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/weight_view.h"

namespace minimax {

enum class ActivationPrecision : uint8_t {
  // x is used as given (f32); every product and sum is f32 (fp32 accumulation). The default.
  kF32,
  // x is rounded to bf16 (nearest even) once per call and multiplied with vdpbf16ps (exact
  // bf16 products, fp32 accumulation): adds a relative error of up to 2^-8 per activation. Half the
  // instructions per weight byte of the f32 kernels: the fastest decode on AMD Zen 4, no faster on
  // the Intel VM (docs/cpu_kernels.md). Calls of kBatchTokens or more take the batch GEMM, as
  // kBF16Batches. Only the AVX-512 level with AVX512_BF16 has such kernels; the other levels, f32
  // weights and FP8 tiles not a multiple of 64 columns wide use f32 activations.
  kBF16,
  // Batches (calls of at least kBatchTokens tokens: prefill, large decode batches) take the batch
  // GEMM with bf16 activations where the CPU has AVX512_BF16 and the format has one (bf16, FP8
  // per channel or per tile): each activation is rounded to bf16 once per call (for FP8 tiles
  // each activation times its tile's scale), which adds a relative error of up to 2^-8 per
  // activation, as kBF16. Smaller calls, other formats and other CPUs compute as kF32.
  kBF16Batches,
  // x is split into two bf16 numbers, hi = bf16(x) and lo = bf16(x - hi), and each weight is
  // multiplied with both by vdpbf16ps (exact products, fp32 accumulation): hi + lo is within 2^-16
  // relative of x, so the result is near the kF32 one at most of the bf16 kernels' speed (no
  // conversion of the decoded weights to f32). AVX-512 + AVX512_BF16 only; elsewhere as kF32, as
  // are the row kernels of bf16 and NVFP4 weights, and the row kernels on CPUs with AMX, where the
  // f32 rows are faster (select_kernel in linear.cc), except FP8 calls of kAmxRowMinTokens to
  // kAmxRowTokens tokens, which take the AMX row kernel.
  kBF16x2,
  // kBF16x2 for calls of kBatchTokens or more (the batch GEMM: prefill, batches of 8+ streams),
  // kF32 for smaller ones (decode). (The commands' `--activations auto` picks kBF16x2 where the
  // CPU has AVX512_BF16: its split row kernels decode as fast as the f32 ones or faster.)
  kBF16x2Batches,
};

// Fewest tokens of a kBF16Batches call that take the batch GEMM.
inline constexpr int64_t kBatchTokens = 8;
// Fewest tokens of an f32-activation call that take the f32 GEMM (linear_gemm_f32-inl.h): below
// them the row kernels were as fast or faster (docs/cpu_kernels.md "Batches with f32
// activations"). 64 for NVFP4 (its rows decode cheaply per token: 0.97x at 32 tokens on AVX-512),
// 32 for the rest. bf16, FP8 per channel and MXFP4 must share theirs, or an MXFP4 checkpoint, its
// FP8 conversion and its BF16 copy would part at an expert given tokens between two thresholds.
inline int64_t f32_batch_tokens(WeightFormat f) { return f == WeightFormat::kNvfp4 ? 64 : 32; }
// On CPUs with AMX, bf16 and split (kBF16, kBF16x2) calls of kAmxRowMinTokens to kAmxRowTokens
// tokens on FP8 weights (per channel, or tiles a multiple of 64 columns wide) take the AMX row
// kernel instead of the f32 rows or the GEMM, except under batch invariance (docs/cpu_kernels.md
// "Small batches on AMX").
inline constexpr int64_t kAmxRowMinTokens = 3;
inline constexpr int64_t kAmxRowTokens = 8;

// kBF16Batches and kBF16x2Batches: a call's arithmetic depends on its number of tokens.
bool varies_with_call_size(ActivationPrecision p);
// Error naming p when it varies with the call size (asked for with batch invariance).
void check_batch_invariant(ActivationPrecision p);

// The name of p ("f32", "bf16", "bf16-batches", "bf16x2", "bf16x2-batches").
const char* activation_precision_name(ActivationPrecision p);
// The precision a name above stands for, or nullopt.
std::optional<ActivationPrecision> parse_activation_precision(std::string_view name);

struct CpuLinearOptions {
  CpuIsa isa = default_cpu_isa();  // Error if the CPU does not support it
  ActivationPrecision activations = ActivationPrecision::kF32;
  // Batches may run on AMX tiles (where the CPU has them, or emulated: cpu_features.h
  // amx_usable; false: the vdpbf16ps GEMM, to compare).
  bool amx = amx_usable();
  // A call uses at most one thread per this many weight bytes (waking a thread costs more than a
  // smaller share saves); 0 splits even the smallest matrix across the whole pool (tests).
  int64_t min_bytes_per_thread = 256 * 1024;
  // Every call takes the row kernels, whose sum for each output element runs in one order
  // whatever the number of tokens in the call (tile shape, token blocks and threads change which
  // outputs a pass computes, never how one is summed): a token's result is then the same bits in
  // a call of 1 token or of 500. Without it calls of kBatchTokens or more take the batch GEMM
  // (vdpbf16ps or AMX), which sums in another order (and folds FP8 tile scales into the
  // activations). The *-batches precisions switch arithmetic with the call size and are refused
  // (Error) with it. docs/cpu_kernels.md "Batch invariance".
  bool batch_invariant = false;
};

// y [tokens, w.rows] = x [tokens, w.cols] · Wᵀ, x and y row-major f32 (any alignment). Rows are
// split across `pool` (each thread reads its own rows, so the weight is read once in total), and
// up to a few dozen tokens share one pass over each row, so for decode and small batches the
// weight streams from memory once per call. Throws Error naming the parameter when the view is
// unusable (null data or scales, non-positive shape, an FP4 width that is not a whole number of
// blocks, a non-positive FP8 tile).
void cpu_linear(const WeightView& w, const float* x, int64_t tokens, float* y, ThreadPool& pool);
void cpu_linear(const WeightView& w, const float* x, int64_t tokens, float* y, ThreadPool& pool,
                const CpuLinearOptions& options);

// The same with the kernel table's calling convention (kernels/ops.h LinearFn): a null pool runs
// on the calling thread only.
void cpu_linear_op(const WeightView& w, const float* x, int64_t tokens, float* y, ThreadPool* pool,
                   const CpuLinearOptions& options);

}  // namespace minimax
