// cpu_linear: checks the view, picks the kernel for (format, ISA level, activation precision),
// prepares the activations in the kernel's column order and splits the rows across the pool.
#include "kernels/cpu/linear.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include "base/error.h"
#include "formats/float_formats.h"
#include "kernels/cpu/linear_internal.h"

namespace minimax {
namespace cpu_linear_detail {

const DecodeTables& decode_tables() {
  static const DecodeTables tables = [] {
    DecodeTables t{};
    for (int c = 0; c < 256; ++c) {
      const auto code = static_cast<uint8_t>(c);
      t.e4m3[c] = static_cast<float>(fp8_to_f64(code, Fp8Format::kE4M3FN));
      t.e8m0[c] = static_cast<float>(e8m0_to_f64(code));
      if (c < 128) {
        const uint32_t bits = std::bit_cast<uint32_t>(t.e4m3[c]);
        t.e4m3_bf16_lo[c] = static_cast<uint8_t>(bits >> 16);
        t.e4m3_bf16_hi[c] = static_cast<uint8_t>(bits >> 24);
      }
      if (c < 16) {
        t.e2m1[c] = static_cast<float>(e2m1_to_f64(code));
        const uint32_t bits = std::bit_cast<uint32_t>(t.e2m1[c]);
        t.e2m1_bf16_lo[c] = static_cast<uint8_t>(bits >> 16);
        t.e2m1_bf16_hi[c] = static_cast<uint8_t>(bits >> 24);
      }
    }
    return t;
  }();
  return tables;
}

}  // namespace cpu_linear_detail

namespace {

using cpu_linear_detail::AlignedScratch;
using cpu_linear_detail::LinearJob;
using cpu_linear_detail::RowKernel;

// Prepared activations of one token block must stay in L2 while the block's weight rows stream by.
constexpr int64_t kTokenBlockBytes = 512 * 1024;
// Thread boundaries fall on multiples of this many rows (whole cache lines of y per thread).
constexpr int64_t kRowAlign = 16;

void check_call(const WeightView& w, const float* x, int64_t tokens, const float* y) {
  const std::string_view f = weight_format_name(w.format);
  if (w.rows <= 0 || w.cols <= 0)
    fail("cpu_linear: {} weight shape [{}, {}] is not positive", f, w.rows, w.cols);
  if (w.data == nullptr) fail("cpu_linear: {} weight [{}, {}] has no data", f, w.rows, w.cols);
  const bool scaled = w.format != WeightFormat::kF32 && w.format != WeightFormat::kBF16;
  if (scaled && w.scales == nullptr) fail("cpu_linear: {} weight has no scales", f);
  if (w.format == WeightFormat::kFp8Block && (w.block_rows <= 0 || w.block_cols <= 0))
    fail("cpu_linear: fp8-block tile {}x{} is not positive", w.block_rows, w.block_cols);
  if ((w.format == WeightFormat::kMxfp4 || w.format == WeightFormat::kMxfp8) && w.cols % 32 != 0)
    fail("cpu_linear: {} input width {} is not a multiple of 32", f, w.cols);
  if (w.format == WeightFormat::kNvfp4 && w.cols % 16 != 0)
    fail("cpu_linear: nvfp4 input width {} is not a multiple of 16", w.cols);
  if (tokens < 0) fail("cpu_linear: tokens = {} is negative", tokens);
  if (tokens > 0 && (x == nullptr || y == nullptr))
    fail("cpu_linear: {} of {} tokens is null", x == nullptr ? "x" : "y", tokens);
}

// The AMX row kernel (linear_amx_rows.cc) if the call takes it, else one with a null run: FP8
// weights that have one, bf16 or split activations on a CPU with AMX, calls of kAmxRowMinTokens to
// kAmxRowTokens tokens (an expert's share of a batch of streams). One or two tokens read their
// weight from memory as fast or faster through the f32 rows (decode 0.86x end to end with every FP8
// call on this kernel, on the Intel Xeon with AMX), and past kAmxRowTokens the GEMM shares each
// decoded panel among all the tokens. Not under batch invariance: it would then have to take the
// 1-token calls too (docs/cpu_kernels.md "Small batches on AMX").
RowKernel amx_rows_if_taken(const WeightView& w, int64_t tokens, const CpuLinearOptions& options) {
  const bool bf16 = options.activations == ActivationPrecision::kBF16;
  const bool split = options.activations == ActivationPrecision::kBF16x2;
  if (!(bf16 || split) || options.batch_invariant || tokens < kAmxRowMinTokens ||
      tokens > kAmxRowTokens || options.isa != CpuIsa::kAvx512 || !cpu_features().avx512_bf16 ||
      !options.amx || !amx_usable())
    return {};
  return cpu_linear_detail::amx_row_kernel(w, split);
}

bool takes_amx_rows(const WeightView& w, int64_t tokens, const CpuLinearOptions& options) {
  return amx_rows_if_taken(w, tokens, options).run != nullptr;
}

RowKernel select_kernel(const WeightView& w, int64_t tokens, const CpuLinearOptions& options) {
  if (!cpu_supports(options.isa))
    fail("cpu_linear: this CPU does not support the '{}' kernels (options.isa)",
         cpu_isa_name(options.isa));
  RowKernel k = amx_rows_if_taken(w, tokens, options);
  const bool bf16 = options.activations == ActivationPrecision::kBF16;
  const bool split = options.activations == ActivationPrecision::kBF16x2;
  // bf16 and NVFP4 weights keep their f32-activation row kernels under split activations, which
  // measured slower for them (bf16: 0.87x decode, its f32 kernel is a shift and a mask away from
  // the memory limit; NVFP4: its decode tables, scale spreads and two scale groups leave too few
  // registers). So do FP8 tiles and per-channel FP8: since their rows are read apart (rows_apart)
  // the f32 rows stream them from memory 1.1-1.4x faster on AMD Zen 4 at one token (with tile
  // scales both split halves chain into one partial sum per chunk, four vdpbf16ps of latency 6
  // against four FMAs of latency 4; MXFP8 keeps the split, 1.4x faster at 4 tokens, MXFP4 too).
  // Their batches still take the split GEMM (bf16). So does every format on CPUs with AMX (Intel),
  // where vdpbf16ps runs at half the rate of the f32 FMA and split rows issue twice the
  // instructions (docs/cpu_kernels.md). The choice does not depend on the call size, so batch
  // invariance keeps it. The f32 rows use x unrounded, at least as accurate as the split.
  const bool split_helps =
      !(split && (w.format == WeightFormat::kBF16 || w.format == WeightFormat::kNvfp4 ||
                  w.format == WeightFormat::kFp8Block || w.format == WeightFormat::kFp8Channel ||
                  cpu_features().amx_bf16));
  if (k.run == nullptr && options.isa == CpuIsa::kAvx512 && cpu_features().avx512_bf16 &&
      (bf16 || split) && split_helps)
    k = cpu_linear_detail::bf16x_kernel(w, split);
  if (k.run == nullptr && options.isa != CpuIsa::kScalar) {
    switch (w.format) {
      case WeightFormat::kF32:
        k = cpu_linear_detail::f32_kernel(options.isa);
        break;
      case WeightFormat::kBF16:
        k = cpu_linear_detail::bf16_kernel(options.isa);
        break;
      case WeightFormat::kFp8Block:
      case WeightFormat::kFp8Channel:
      case WeightFormat::kMxfp8:
        k = cpu_linear_detail::fp8_kernel(options.isa, w);
        break;
      case WeightFormat::kMxfp4:
        k = cpu_linear_detail::mxfp4_kernel(options.isa);
        break;
      case WeightFormat::kNvfp4:
        k = cpu_linear_detail::nvfp4_kernel(options.isa);
        break;
    }
  }
  if (k.run == nullptr) k = cpu_linear_detail::scalar_kernel();
  return k;
}

// x [tokens, cols] -> `out` [tokens, stride] in the kernel's order, zero-padded (the f32
// kernels; bf16 ones take prepare_bf16_activations).
void permute_activations(const RowKernel& k, const float* x, int64_t tokens, int64_t cols,
                         int64_t stride, float* out) {
  const int64_t chunk = k.chunk_cols;
  if (k.order != nullptr && cpu_features().avx512 &&
      (chunk == 16 || chunk == 32 || chunk == 64 || chunk == 128))
    return cpu_linear_detail::prepare_f32_activations(k, x, tokens, cols, stride, out);
  const int64_t full = cols / chunk * chunk;
  for (int64_t t = 0; t < tokens; ++t) {
    const float* xt = x + t * cols;
    float* ot = out + t * stride;
    if (k.order == nullptr) {
      std::memcpy(ot, xt, static_cast<size_t>(full) * sizeof(float));
    } else {
      for (int64_t c0 = 0; c0 < full; c0 += chunk)
        for (int64_t p = 0; p < chunk; ++p) ot[c0 + p] = xt[c0 + k.order[p]];
    }
    for (int64_t p = 0; full + p < stride; ++p) {
      const int64_t col = full + (k.order != nullptr ? k.order[p] : p);
      ot[full + p] = col < cols ? xt[col] : 0.0f;
    }
  }
}

int64_t part_boundary(int64_t rows, int64_t p, int64_t parts) {
  return p >= parts ? rows : std::min(rows, rows * p / parts / kRowAlign * kRowAlign);
}

struct Split {
  const LinearJob* job;
  cpu_linear_detail::RowRangeFn run;
  int64_t parts;
};

// Part p of `parts` covers rows [rows·p/parts, rows·(p+1)/parts), boundaries rounded down to
// kRowAlign.
void run_part(const Split& s, int64_t part) {
  const int64_t rows = s.job->w->rows;
  const int64_t begin = part_boundary(rows, part, s.parts);
  const int64_t end = part_boundary(rows, part + 1, s.parts);
  if (begin < end) s.run(*s.job, begin, end);
}

// Threads a call uses: one per min_bytes_per_thread of weight, at most one per kRowAlign rows.
int64_t thread_parts(const WeightView& w, ThreadPool* pool, const CpuLinearOptions& options) {
  const int64_t threads = pool == nullptr ? 1 : static_cast<int64_t>(pool->size());
  return std::clamp<int64_t>(
      w.rows * weight_row_bytes(w) / std::max<int64_t>(options.min_bytes_per_thread, 1), 1,
      std::min(threads, (w.rows + kRowAlign - 1) / kRowAlign));
}

// The batch GEMM for this call, or null (then the row kernels run).
cpu_linear_detail::GemmRowsFn select_gemm(const WeightView& w, int64_t tokens,
                                          const CpuLinearOptions& options) {
  const bool split = options.activations == ActivationPrecision::kBF16x2 ||
                     options.activations == ActivationPrecision::kBF16x2Batches;
  if (options.activations == ActivationPrecision::kF32)
    return options.batch_invariant || tokens < f32_batch_tokens(w.format)
               ? nullptr
               : cpu_linear_detail::gemm_f32_kernel(w, options.isa);
  if (options.batch_invariant || tokens < kBatchTokens || options.isa != CpuIsa::kAvx512 ||
      !cpu_features().avx512_bf16 || takes_amx_rows(w, tokens, options))
    return nullptr;
  if (options.amx && amx_usable())
    if (const auto amx = cpu_linear_detail::gemm_amx_kernel(w, split)) return amx;
  return cpu_linear_detail::gemm_bf16_kernel(w, split);
}

void run_gemm(cpu_linear_detail::GemmRowsFn gemm, const WeightView& w, const float* x,
              int64_t tokens, float* y, ThreadPool* pool, const CpuLinearOptions& options) {
  const int64_t parts = thread_parts(w, pool, options);
  auto run = [&](int64_t part) {
    const int64_t begin = part_boundary(w.rows, part, parts);
    const int64_t end = part_boundary(w.rows, part + 1, parts);
    if (begin < end) gemm(w, x, tokens, y, begin, end);
  };
  if (parts == 1) return run(0);
  pool->parallel_for(static_cast<size_t>(parts), [&run](size_t begin, size_t end, size_t) {
    for (size_t p = begin; p < end; ++p) run(static_cast<int64_t>(p));
  });
}

void run_linear(const WeightView& w, const float* x, int64_t tokens, float* y, ThreadPool* pool,
                const CpuLinearOptions& options) {
  check_call(w, x, tokens, y);
  if (options.batch_invariant) check_batch_invariant(options.activations);
  if (tokens == 0) return;
  if (const auto gemm = select_gemm(w, tokens, options))
    return run_gemm(gemm, w, x, tokens, y, pool, options);
  const RowKernel kernel = select_kernel(w, tokens, options);

  // Tokens in blocks whose prepared activations fit in L2: each block is one pass over the
  // weight, so decode and small batches (up to ~20-80 tokens, by width) read it once per call.
  const int64_t stride = (w.cols + kernel.chunk_cols - 1) / kernel.chunk_cols * kernel.chunk_cols;
  // Bytes of prepared activations per padded column: f32, bf16, or bf16 hi + lo.
  const int64_t element_bytes = kernel.bf16_x && !kernel.split_x ? 2 : 4;
  const int64_t block = std::clamp<int64_t>(kTokenBlockBytes / (stride * element_bytes), 4, 256);
  thread_local AlignedScratch scratch;
  void* prepared =
      scratch.get(static_cast<size_t>(std::min(tokens, block) * stride * element_bytes));

  const int64_t parts = thread_parts(w, pool, options);
  for (int64_t t0 = 0; t0 < tokens; t0 += block) {
    const int64_t n = std::min(block, tokens - t0);
    if (kernel.bf16_x) {
      cpu_linear_detail::prepare_bf16_activations(kernel, x + t0 * w.cols, n, w.cols, stride,
                                                  static_cast<uint16_t*>(prepared));
    } else {
      permute_activations(kernel, x + t0 * w.cols, n, w.cols, stride,
                          static_cast<float*>(prepared));
    }
    LinearJob job;
    job.w = &w;
    job.x = prepared;
    job.x_stride = kernel.split_x ? 2 * stride : stride;
    job.tokens = n;
    job.y = y + t0 * w.rows;
    if (parts == 1) {
      kernel.run(job, 0, w.rows);
      continue;
    }
    const Split split{&job, kernel.run, parts};
    pool->parallel_for(static_cast<size_t>(parts), [&split](size_t begin, size_t end, size_t) {
      for (size_t p = begin; p < end; ++p) run_part(split, static_cast<int64_t>(p));
    });
  }
}

}  // namespace

void cpu_linear(const WeightView& w, const float* x, int64_t tokens, float* y, ThreadPool& pool) {
  run_linear(w, x, tokens, y, &pool, CpuLinearOptions{});
}

void cpu_linear(const WeightView& w, const float* x, int64_t tokens, float* y, ThreadPool& pool,
                const CpuLinearOptions& options) {
  run_linear(w, x, tokens, y, &pool, options);
}

void cpu_linear_op(const WeightView& w, const float* x, int64_t tokens, float* y, ThreadPool* pool,
                   const CpuLinearOptions& options) {
  run_linear(w, x, tokens, y, pool, options);
}

bool varies_with_call_size(ActivationPrecision p) {
  return p == ActivationPrecision::kBF16Batches || p == ActivationPrecision::kBF16x2Batches;
}

void check_batch_invariant(ActivationPrecision p) {
  if (varies_with_call_size(p))
    fail(
        "batch invariance: activations {} change precision with the number of tokens in a call; "
        "use f32, bf16x2 or bf16",
        activation_precision_name(p));
}

const char* activation_precision_name(ActivationPrecision p) {
  switch (p) {
    case ActivationPrecision::kF32:
      return "f32";
    case ActivationPrecision::kBF16:
      return "bf16";
    case ActivationPrecision::kBF16Batches:
      return "bf16-batches";
    case ActivationPrecision::kBF16x2:
      return "bf16x2";
    case ActivationPrecision::kBF16x2Batches:
      return "bf16x2-batches";
  }
  return "?";
}

std::optional<ActivationPrecision> parse_activation_precision(std::string_view name) {
  for (const auto p :
       {ActivationPrecision::kF32, ActivationPrecision::kBF16, ActivationPrecision::kBF16Batches,
        ActivationPrecision::kBF16x2, ActivationPrecision::kBF16x2Batches})
    if (name == activation_precision_name(p)) return p;
  return std::nullopt;
}

}  // namespace minimax
