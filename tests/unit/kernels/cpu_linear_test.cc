// Tests of cpu_linear (kernels/cpu/linear.h): every weight format on every ISA path this CPU runs
// (the others skip), odd shapes, 1-16 tokens, misaligned pointers, one and two threads (the real
// M2 / M3 layer shapes are the op table's, tests/backend_ops/), against a float64 product of the
// weight as the scalar reference decoders of formats/ decode it. Bound: |y - y_ref| <= (cols/8 +
// 32)·2^-24·Σ|x|·|w|; for the bf16-activation paths y_ref uses x rounded to bf16 (so against the
// exact x the bound grows by 2^-8·Σ|x|·|w|), and for the split (bf16x2) paths x as the sum of its
// bf16 hi and lo halves (2^-16·Σ|x|·|w|), which checks that the rounding of x is their only extra
// error.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "amx_modes.h"
#include "base/error.h"
#include "formats/float_formats.h"
#include "kernels/backend.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/linear.h"

namespace minimax {
namespace {

// ---- Random weights in every stored format, and their exact values ----------------------------

struct Weight {
  std::vector<uint8_t> data_bytes, scale_bytes;  // one spare leading byte: views start misaligned
  WeightView view;
};

struct Tables {  // from the reference decoders of formats/
  std::array<double, 256> e4m3{}, e8m0{};
  std::array<double, 16> e2m1{};
  Tables() {
    for (int c = 0; c < 256; ++c) {
      e4m3[c] = fp8_to_f64(static_cast<uint8_t>(c), Fp8Format::kE4M3FN);
      e8m0[c] = e8m0_to_f64(static_cast<uint8_t>(c));
      if (c < 16) e2m1[c] = e2m1_to_f64(static_cast<uint8_t>(c));
    }
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}

void put_misaligned_f32(std::vector<uint8_t>& bytes, int64_t index, float v) {
  std::memcpy(bytes.data() + 1 + 4 * index, &v, 4);
}
float get_f32(const void* base, int64_t index) {
  float v;
  std::memcpy(&v, static_cast<const uint8_t*>(base) + 4 * index, 4);
  return v;
}

Weight random_linear_weight(WeightFormat format, int64_t rows, int64_t cols, uint32_t seed,
                            int block_rows = 128, int block_cols = 128) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> byte(0, 255);
  Weight w;
  WeightView& v = w.view;
  v.format = format;
  v.rows = rows;
  v.cols = cols;
  auto fp8_code = [&] {  // any code but the two NaNs
    int c;
    do c = byte(rng);
    while ((c & 0x7F) == 0x7F);
    return static_cast<uint8_t>(c);
  };
  switch (format) {
    case WeightFormat::kF32:
      w.data_bytes.resize(1 + rows * cols * 4);
      for (int64_t i = 0; i < rows * cols; ++i) put_misaligned_f32(w.data_bytes, i, normal(rng));
      break;
    case WeightFormat::kBF16:
      w.data_bytes.resize(1 + rows * cols * 2);
      for (int64_t i = 0; i < rows * cols; ++i) {
        const uint16_t b = f32_to_bf16(normal(rng));
        std::memcpy(w.data_bytes.data() + 1 + 2 * i, &b, 2);
      }
      break;
    case WeightFormat::kFp8Block:
    case WeightFormat::kFp8Channel: {
      w.data_bytes.resize(1 + rows * cols);
      for (int64_t i = 0; i < rows * cols; ++i) w.data_bytes[1 + i] = fp8_code();
      v.block_rows = block_rows;
      v.block_cols = block_cols;
      const int64_t n =
          format == WeightFormat::kFp8Channel
              ? rows
              : ((rows + block_rows - 1) / block_rows) * ((cols + block_cols - 1) / block_cols);
      w.scale_bytes.resize(1 + 4 * n);
      std::uniform_real_distribution<float> scale(0.0005f, 0.02f);
      for (int64_t i = 0; i < n; ++i) put_misaligned_f32(w.scale_bytes, i, scale(rng));
      break;
    }
    case WeightFormat::kMxfp8: {
      w.data_bytes.resize(1 + rows * cols);
      for (int64_t i = 0; i < rows * cols; ++i) w.data_bytes[1 + i] = fp8_code();
      w.scale_bytes.resize(1 + rows * cols / 32);
      std::uniform_int_distribution<int> exponent(110, 125);
      for (size_t i = 1; i < w.scale_bytes.size(); ++i) w.scale_bytes[i] = exponent(rng);
      break;
    }
    case WeightFormat::kMxfp4: {
      w.data_bytes.resize(1 + rows * cols / 2);
      for (size_t i = 1; i < w.data_bytes.size(); ++i) w.data_bytes[i] = byte(rng);
      w.scale_bytes.resize(1 + rows * cols / 32);
      std::uniform_int_distribution<int> exponent(115, 135);
      for (size_t i = 1; i < w.scale_bytes.size(); ++i) w.scale_bytes[i] = exponent(rng);
      break;
    }
    case WeightFormat::kNvfp4: {
      w.data_bytes.resize(1 + rows * cols / 2);
      for (size_t i = 1; i < w.data_bytes.size(); ++i) w.data_bytes[i] = byte(rng);
      w.scale_bytes.resize(1 + rows * cols / 16);
      for (size_t i = 1; i < w.scale_bytes.size(); ++i) w.scale_bytes[i] = fp8_code();
      v.global_scale = 0.00137f;
      break;
    }
  }
  v.data = w.data_bytes.data() + 1;
  v.scales = w.scale_bytes.empty() ? nullptr : w.scale_bytes.data() + 1;
  return w;
}

// Row `r` of the weight in float64, exactly.
void decode_row(const WeightView& w, int64_t r, std::vector<double>& out) {
  const Tables& t = tables();
  const int64_t n = w.cols;
  out.resize(n);
  const uint8_t* scales = static_cast<const uint8_t*>(w.scales);
  switch (w.format) {
    case WeightFormat::kF32:
      for (int64_t c = 0; c < n; ++c) out[c] = get_f32(w.data, r * n + c);
      return;
    case WeightFormat::kBF16:
      for (int64_t c = 0; c < n; ++c) {
        uint16_t b;
        std::memcpy(&b, w.data + 2 * (r * n + c), 2);
        out[c] = bf16_to_f32(b);
      }
      return;
    case WeightFormat::kFp8Channel:
      for (int64_t c = 0; c < n; ++c) out[c] = t.e4m3[w.data[r * n + c]] * get_f32(w.scales, r);
      return;
    case WeightFormat::kFp8Block: {
      const int64_t tiles_per_row = (n + w.block_cols - 1) / w.block_cols;
      for (int64_t c = 0; c < n; ++c)
        out[c] = t.e4m3[w.data[r * n + c]] *
                 get_f32(w.scales, r / w.block_rows * tiles_per_row + c / w.block_cols);
      return;
    }
    case WeightFormat::kMxfp8:
      for (int64_t c = 0; c < n; ++c)
        out[c] = t.e4m3[w.data[r * n + c]] * t.e8m0[scales[(r * n + c) / 32]];
      return;
    case WeightFormat::kMxfp4:
      for (int64_t c = 0; c < n; ++c) {
        const uint8_t byte = w.data[(r * n + c) / 2];
        out[c] = t.e2m1[c % 2 == 0 ? byte & 0x0F : byte >> 4] * t.e8m0[scales[(r * n + c) / 32]];
      }
      return;
    case WeightFormat::kNvfp4:
      for (int64_t c = 0; c < n; ++c) {
        const uint8_t byte = w.data[(r * n + c) / 2];
        out[c] = t.e2m1[c % 2 == 0 ? byte & 0x0F : byte >> 4] * t.e4m3[scales[(r * n + c) / 16]] *
                 static_cast<double>(w.global_scale);
      }
      return;
  }
}

struct Reference {
  std::vector<double> y, magnitude;  // Σ w·x and Σ |w|·|x|, [tokens, rows]
};

Reference reference(const WeightView& w, const float* x, int64_t tokens) {
  Reference ref;
  ref.y.assign(tokens * w.rows, 0.0);
  ref.magnitude.assign(tokens * w.rows, 0.0);
  std::vector<double> row;
  for (int64_t r = 0; r < w.rows; ++r) {
    decode_row(w, r, row);
    for (int64_t t = 0; t < tokens; ++t) {
      double sum = 0, mag = 0;
      for (int64_t c = 0; c < w.cols; ++c) {
        const double xv = x[t * w.cols + c];
        sum += row[c] * xv;
        mag += std::fabs(row[c] * xv);
      }
      ref.y[t * w.rows + r] = sum;
      ref.magnitude[t * w.rows + r] = mag;
    }
  }
  return ref;
}

// Activations at a misaligned address (one float past a 64-byte boundary at best).
struct Activations {
  std::vector<float> storage;
  float* data() { return storage.data() + 1; }
};
Activations random_activations(int64_t tokens, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Activations a;
  a.storage.resize(1 + tokens * cols);
  for (auto& v : a.storage) v = normal(rng);
  return a;
}
std::vector<float> rounded_to_bf16(const float* x, int64_t n) {
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_to_f32(f32_to_bf16(x[i]));
  return out;
}
// x as hi + lo, hi = bf16(x), lo = bf16(x - hi) (hi + lo fits an f32: 16 significant bits).
std::vector<float> split_to_bf16_pair(const float* x, int64_t n) {
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i) {
    const float hi = bf16_to_f32(f32_to_bf16(x[i]));
    out[i] = hi + bf16_to_f32(f32_to_bf16(x[i] - hi));
  }
  return out;
}

// ---- The paths --------------------------------------------------------------------------------

struct Path {
  CpuIsa isa;
  ActivationPrecision activations;
  bool amx = true;  // false: CpuLinearOptions::amx off, so batches take the vdpbf16ps GEMM
};
std::string path_name(const Path& p) {
  switch (p.activations) {
    case ActivationPrecision::kBF16:
      return std::string(cpu_isa_name(p.isa)) + "_bf16x";
    case ActivationPrecision::kBF16x2:
      return std::string(cpu_isa_name(p.isa)) + "_bf16x2";
    case ActivationPrecision::kBF16x2Batches:
      return std::string(cpu_isa_name(p.isa)) + "_bf16x2batches";
    default:
      return std::string(cpu_isa_name(p.isa)) + "_f32x";
  }
}
const Path kPaths[] = {{CpuIsa::kScalar, ActivationPrecision::kF32},
                       {CpuIsa::kAvx2, ActivationPrecision::kF32},
                       {CpuIsa::kAvx512, ActivationPrecision::kF32},
                       {CpuIsa::kAvx512, ActivationPrecision::kBF16},
                       {CpuIsa::kAvx512, ActivationPrecision::kBF16x2},
                       {CpuIsa::kAvx512, ActivationPrecision::kBF16x2Batches}};

// Empty when this CPU runs the path, else why not.
std::string unsupported(const Path& p) {
  if (!cpu_supports(p.isa))
    return "this CPU lacks " + std::string(cpu_isa_name(p.isa)) +
           (p.isa == CpuIsa::kAvx512 ? " (F, BW, VL, DQ and VBMI)" : " (AVX2, FMA, F16C, BMI1/2)");
  if (p.activations != ActivationPrecision::kF32 && !cpu_features().avx512_bf16)
    return "this CPU lacks AVX512_BF16 (vdpbf16ps)";
  return "";
}

// Whether the path runs the AMX kernels: on AMX (amx_usable(): emulated too) unless it turns them
// off.
bool amx_on(const Path& p) { return p.amx && amx_usable(); }

// Whether the call takes the batch GEMM: kBatchTokens or more tokens under a bf16 precision on
// AVX-512 with AVX512_BF16, for every format but f32: the AMX GEMM where amx_on (FP8 tiles whose
// width is a multiple of 16; other tiles take the vdpbf16ps GEMM), else the vdpbf16ps GEMM.
// Whether the call takes the AMX row kernel: on AMX, bf16 or split activations, FP8 per channel
// or in tiles a multiple of 64 wide, kAmxRowMinTokens to kAmxRowTokens tokens, not under batch
// invariance.
bool takes_amx_rows(const Path& p, const WeightView& w, int64_t tokens) {
  return amx_on(p) && p.isa == CpuIsa::kAvx512 && cpu_features().avx512_bf16 &&
         (p.activations == ActivationPrecision::kBF16 ||
          p.activations == ActivationPrecision::kBF16x2) &&
         (w.format == WeightFormat::kFp8Channel ||
          (w.format == WeightFormat::kFp8Block && w.block_cols % 64 == 0)) &&
         tokens >= kAmxRowMinTokens && tokens <= kAmxRowTokens;
}

bool takes_gemm(const Path& p, const WeightView& w, int64_t tokens) {
  if (p.activations == ActivationPrecision::kF32 || tokens < kBatchTokens ||
      takes_amx_rows(p, w, tokens) || p.isa != CpuIsa::kAvx512 || !cpu_features().avx512_bf16)
    return false;
  return w.format != WeightFormat::kF32;
}

// Whether the call takes the f32 GEMM (linear_gemm_f32-inl.h): f32_batch_tokens or more tokens
// (64 for NVFP4, else 32) with f32 activations on AVX2 or AVX-512, every layout.
// Exact products (FP8 tiles: of the activation times its tile's scale, one f32 rounding) and f32
// sums, one lane per column residue: the row kernels' f32 bound holds.
bool takes_f32_gemm(const Path& p, const WeightView& w, int64_t tokens) {
  return p.activations == ActivationPrecision::kF32 &&
         tokens >= (w.format == WeightFormat::kNvfp4 ? 64 : 32) && p.isa != CpuIsa::kScalar;
}

// The AMX GEMM on FP8 tiles neither 64k nor other than 16k wide: it multiplies each weight times
// its tile's scale, split into bf16 hi + lo (within 2^-16 relative), with the activations as the
// path takes them. (Tiles 64k wide decode exactly and scale the sums.)
bool amx_scaled_weights(const Path& p, const WeightView& w, int64_t tokens) {
  return takes_gemm(p, w, tokens) && amx_on(p) && w.format == WeightFormat::kFp8Block &&
         w.block_cols % 16 == 0 && w.block_cols % 64 != 0;
}

// How the path's kernel takes the activations for this weight: the GEMM rounds them (kBF16) or
// splits them (kBF16x2, kBF16x2Batches); the row kernels of the bf16 paths use them rounded
// (kBF16) or split (kBF16x2), except for f32 weights, FP8 tiles a 64-column chunk would straddle,
// and bf16, NVFP4, FP8-tile and per-channel FP8 weights, or any weight on a CPU with AMX, with
// split activations (those take the f32-activation kernels).
ActivationPrecision kernel_activations(const Path& p, const WeightView& w, int64_t tokens) {
  if (takes_amx_rows(p, w, tokens)) return p.activations;
  if (takes_gemm(p, w, tokens))
    return p.activations == ActivationPrecision::kBF16 ? ActivationPrecision::kBF16
                                                       : ActivationPrecision::kBF16x2;
  if (p.activations == ActivationPrecision::kBF16x2Batches) return ActivationPrecision::kF32;
  if (p.activations == ActivationPrecision::kF32 || w.format == WeightFormat::kF32 ||
      (w.format == WeightFormat::kFp8Block && w.block_cols % 64 != 0) ||
      (p.activations == ActivationPrecision::kBF16x2 &&
       (w.format == WeightFormat::kNvfp4 || w.format == WeightFormat::kBF16 ||
        w.format == WeightFormat::kFp8Block || w.format == WeightFormat::kFp8Channel ||
        cpu_features().amx_bf16)))
    return ActivationPrecision::kF32;
  return p.activations;
}

// The vdpbf16ps GEMM on FP8 tiles rounds or splits each activation times its tile's scale, not
// the activation: against the exact reference its extra error is up to 2^-8 (rounded) or 2^-16
// (split) relative per activation, plus the f32 rounding of the product.
// So does the AMX row kernel.
bool rounds_scaled_activations(const Path& p, const WeightView& w, int64_t tokens) {
  return w.format == WeightFormat::kFp8Block &&
         ((takes_gemm(p, w, tokens) && !amx_scaled_weights(p, w, tokens)) ||
          takes_amx_rows(p, w, tokens));
}

// The reference for a path: of x, or of x as the bf16 paths see it (rounded, or hi + lo: their
// only extra error, so the f32 bound then applies).
struct LinearCase {
  const WeightView* w;
  const float* x;
  int64_t tokens;
  Reference exact, bf16x, bf16x2;  // the last two computed only when asked for
  const Reference& of(ActivationPrecision p) const {
    return p == ActivationPrecision::kBF16     ? bf16x
           : p == ActivationPrecision::kBF16x2 ? bf16x2
                                               : exact;
  }
};

LinearCase make_case(const WeightView& w, const float* x, int64_t tokens, bool with_bf16x,
                     bool with_bf16x2) {
  LinearCase c{&w, x, tokens, reference(w, x, tokens), {}, {}};
  if (with_bf16x) {
    const std::vector<float> xr = rounded_to_bf16(x, tokens * w.cols);
    c.bf16x = reference(w, xr.data(), tokens);
  }
  if (with_bf16x2) {
    const std::vector<float> xr = split_to_bf16_pair(x, tokens * w.cols);
    c.bf16x2 = reference(w, xr.data(), tokens);
  }
  return c;
}

// Runs the path with 1 and 2 threads (the 2-thread call must give the same bits) and checks the
// bound.
void check_path(const Path& path, const LinearCase& c, const std::string& what) {
  const WeightView& w = *c.w;
  const bool scaled = rounds_scaled_activations(path, w, c.tokens);
  const Reference& ref = scaled ? c.exact : c.of(kernel_activations(path, w, c.tokens));
  const bool split = kernel_activations(path, w, c.tokens) == ActivationPrecision::kBF16x2;
  // AMX FP8 tiles: the weight's lo half, and (split) the lo × lo product left out, 2^-16 each.
  const double a = scaled ? (split ? 0x1p-16 + 0x1p-24 : 0x1p-8 + 0x1p-24)
                   : amx_scaled_weights(path, w, c.tokens) ? 0x1p-15 + 0x1p-24
                                                           : 0.0;
  // tdpbf16ps sums every product of an output into one f32 in turn: the first-order bound of a
  // sum of cols terms, not the row kernels' eight partial sums.
  const double terms =
      (takes_gemm(path, w, c.tokens) && amx_on(path)) || takes_amx_rows(path, w, c.tokens)
          ? static_cast<double>(w.cols)
          : static_cast<double>(w.cols) / 8;
  ASSERT_EQ(ref.y.size(), static_cast<size_t>(c.tokens * w.rows));
  static ThreadPool one(1), two(2);
  CpuLinearOptions options;
  options.isa = path.isa;
  options.activations = path.activations;
  options.amx = amx_on(path);
  options.min_bytes_per_thread = 0;
  std::vector<float> y1(c.tokens * w.rows, -1.0f), y2(c.tokens * w.rows, -2.0f);
  cpu_linear(w, c.x, c.tokens, y1.data(), one, options);
  cpu_linear(w, c.x, c.tokens, y2.data(), two, options);
  const double u = 0x1p-24;
  for (int64_t i = 0; i < c.tokens * w.rows; ++i) {
    const double bound = ((terms + 32) * u + a) * ref.magnitude[i] + 1e-30;
    const double err = std::fabs(static_cast<double>(y1[i]) - ref.y[i]);
    ASSERT_LE(err, bound) << what << " " << path_name(path) << " token " << i / w.rows << " row "
                          << i % w.rows << ": got " << y1[i] << ", want " << ref.y[i];
    ASSERT_EQ(std::memcmp(&y1[i], &y2[i], 4), 0)
        << what << " " << path_name(path) << ": 2 threads give " << y2[i] << ", 1 thread " << y1[i]
        << " at " << i;
  }
}

void check_path(const Path& path, const WeightView& w, const float* x, int64_t tokens,
                const std::string& what) {
  const ActivationPrecision p = kernel_activations(path, w, tokens);
  check_path(
      path,
      make_case(w, x, tokens, p == ActivationPrecision::kBF16, p == ActivationPrecision::kBF16x2),
      what);
}

std::string format_name(WeightFormat f) {
  switch (f) {
    case WeightFormat::kF32:
      return "f32";
    case WeightFormat::kBF16:
      return "bf16";
    case WeightFormat::kFp8Block:
      return "fp8block";
    case WeightFormat::kFp8Channel:
      return "fp8channel";
    case WeightFormat::kMxfp4:
      return "mxfp4";
    case WeightFormat::kNvfp4:
      return "nvfp4";
    case WeightFormat::kMxfp8:
      return "mxfp8";
  }
  return "?";
}

// ---- Odd shapes × tokens × threads, every format on every path --------------------------------

class CpuLinearShapes : public ::testing::TestWithParam<std::tuple<WeightFormat, Path>> {};

TEST_P(CpuLinearShapes, MatchFloat64Reference) {
  const auto [format, path] = GetParam();
  if (const std::string why = unsupported(path); !why.empty()) GTEST_SKIP() << why;
  // Widths: any for f32/bf16/FP8 (not multiples of any vector width, below and above one chunk),
  // whole blocks for the FP4 formats, with partial last chunks.
  std::vector<int64_t> widths;
  switch (format) {
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp8:
      widths = {32, 96, 128, 160, 288, 416};
      break;
    case WeightFormat::kNvfp4:
      widths = {16, 48, 128, 144, 272};
      break;
    default:
      widths = {1, 7, 16, 33, 64, 65, 130, 257};
  }
  const int64_t heights[] = {1, 5, 33, 40};
  uint32_t seed = 1;
  for (int64_t cols : widths) {
    for (int64_t rows : heights) {
      const Weight w = random_linear_weight(format, rows, cols, seed++, 32, 64);
      for (int64_t tokens : {1, 2, 3, 7, 16, 37}) {
        Activations x = random_activations(tokens, cols, seed++);
        check_path(path, w.view, x.data(), tokens,
                   format_name(format) + " [" + std::to_string(rows) + ", " + std::to_string(cols) +
                       "] × " + std::to_string(tokens) + " tokens");
        if (HasFatalFailure()) return;
      }
    }
  }
}

std::string shapes_name(const ::testing::TestParamInfo<std::tuple<WeightFormat, Path>>& info) {
  return format_name(std::get<0>(info.param)) + "_" + path_name(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    AllFormatsAllPaths, CpuLinearShapes,
    ::testing::Combine(::testing::Values(WeightFormat::kF32, WeightFormat::kBF16,
                                         WeightFormat::kFp8Block, WeightFormat::kFp8Channel,
                                         WeightFormat::kMxfp4, WeightFormat::kNvfp4,
                                         WeightFormat::kMxfp8),
                       ::testing::ValuesIn(kPaths)),
    shapes_name);

// Every shape of `widths` (the block formats' when `format` is MXFP4, NVFP4 or MXFP8) × 5 and 40
// rows × `tokens` on `path`, against the model of paths and bounds; `what` names the variant.
void check_shapes(const Path& path, WeightFormat format, const std::vector<int64_t>& block_widths,
                  const std::vector<int64_t>& widths, const std::vector<int64_t>& tokens,
                  uint32_t seed, const std::string& what) {
  const bool blocks = format == WeightFormat::kMxfp4 || format == WeightFormat::kNvfp4 ||
                      format == WeightFormat::kMxfp8;
  for (int64_t cols : blocks ? block_widths : widths)
    for (int64_t rows : {5, 40}) {
      const Weight w = random_linear_weight(format, rows, cols, seed++, 32, 64);
      for (int64_t n : tokens) {
        Activations x = random_activations(n, cols, seed++);
        check_path(path, w.view, x.data(), n,
                   format_name(format) + " [" + std::to_string(rows) + ", " + std::to_string(cols) +
                       "] × " + std::to_string(n) + " tokens, " + what);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
}

// The formats and bf16 precisions the batch GEMMs take, and their test names.
using FormatPrecision = std::tuple<WeightFormat, ActivationPrecision>;
const auto kGemmFormatsAndPrecisions = ::testing::Combine(
    ::testing::Values(WeightFormat::kBF16, WeightFormat::kFp8Block, WeightFormat::kFp8Channel,
                      WeightFormat::kMxfp4, WeightFormat::kNvfp4, WeightFormat::kMxfp8),
    ::testing::Values(ActivationPrecision::kBF16, ActivationPrecision::kBF16x2,
                      ActivationPrecision::kBF16x2Batches));
std::string format_precision_name(const ::testing::TestParamInfo<FormatPrecision>& info) {
  return format_name(std::get<0>(info.param)) + "_" +
         path_name(Path{CpuIsa::kAvx512, std::get<1>(info.param)});
}

// The vdpbf16ps GEMM (linear_gemm.cc) with the AMX kernels turned off, so that CPUs with AMX check
// it too: every format but f32 at GEMM-sized calls (and 7 tokens, the row kernels beside it).
class CpuLinearShapesVdpbf16ps : public ::testing::TestWithParam<FormatPrecision> {};

TEST_P(CpuLinearShapesVdpbf16ps, MatchFloat64Reference) {
  const auto [format, activations] = GetParam();
  const Path path{CpuIsa::kAvx512, activations, /*amx=*/false};
  if (const std::string why = unsupported(path); !why.empty()) GTEST_SKIP() << why;
  check_shapes(path, format, {32, 160, 1056}, {33, 130, 1057}, {7, 8, 13, 37}, 1200, "AMX off");
}

INSTANTIATE_TEST_SUITE_P(Formats, CpuLinearShapesVdpbf16ps, kGemmFormatsAndPrecisions,
                         format_precision_name);

// The AMX kernels on the tile emulator (amx_modes.h), every format but f32 on the paths that take
// them (bf16, bf16x2, bf16x2-batches): the AMX row kernel (3 and 8 tokens, FP8) and the AMX GEMM
// (8+ tokens, every format), against the same model of paths and bounds as on the tiles. On CPUs
// without AMX this is what checks them; on AMX CPUs it agrees bit for bit with the tiles
// (amx_emulation_test.cc).
class CpuLinearShapesEmulatedAmx : public ::testing::TestWithParam<FormatPrecision> {};

TEST_P(CpuLinearShapesEmulatedAmx, MatchFloat64Reference) {
  const auto [format, activations] = GetParam();
  const Path path{CpuIsa::kAvx512, activations};
  if (const std::string why = unsupported(path); !why.empty()) GTEST_SKIP() << why;
  const ScopedAmxMode mode(AmxMode::kEmulated);
  check_shapes(path, format, {32, 160, 416}, {33, 64, 130, 257}, {3, 8, 16, 37}, 900,
               "emulated AMX");
}

INSTANTIATE_TEST_SUITE_P(Formats, CpuLinearShapesEmulatedAmx, kGemmFormatsAndPrecisions,
                         format_precision_name);

// ---- Paths with one parameter -----------------------------------------------------------------

class CpuLinearPath : public ::testing::TestWithParam<Path> {
 protected:
  void SetUp() override {
    if (const std::string why = unsupported(GetParam()); !why.empty()) GTEST_SKIP() << why;
  }
};

std::string path_param_name(const ::testing::TestParamInfo<Path>& info) {
  return path_name(info.param);
}

// Tiles that a 64-column chunk straddles (block_cols 48) and tall thin tiles.
TEST_P(CpuLinearPath, Fp8BlockTiles) {
  uint32_t seed = 200;
  for (auto [br, bc] : {std::pair{48, 48}, std::pair{1, 128}, std::pair{128, 16}}) {
    const Weight w = random_linear_weight(WeightFormat::kFp8Block, 70, 200, seed++, br, bc);
    Activations x = random_activations(3, 200, seed++);
    check_path(GetParam(), w.view, x.data(), 3,
               "fp8 tile " + std::to_string(br) + "x" + std::to_string(bc));
    if (HasFatalFailure()) return;
  }
}

// More tokens than share one pass over the weight (the token blocks of linear.cc).
TEST_P(CpuLinearPath, ManyTokens) {
  const Weight w = random_linear_weight(WeightFormat::kFp8Channel, 20, 6000, 300);
  Activations x = random_activations(40, 6000, 301);
  check_path(GetParam(), w.view, x.data(), 40, "fp8 [20, 6000] × 40 tokens");
}

// NaN codes make their row's outputs NaN on every path, as the reference decoders say; e8m0 code 0
// is 2^-127 (not 0).
TEST_P(CpuLinearPath, NanCodesAndExtremeScales) {
  const Path path = GetParam();
  CpuLinearOptions options;
  options.isa = path.isa;
  options.activations = path.activations;
  ThreadPool pool(1);
  std::vector<float> x(256, 1.0f), y(4);

  Weight fp8 = random_linear_weight(WeightFormat::kFp8Channel, 4, 256, 400);
  fp8.data_bytes[1 + 1 * 256 + 200] = 0x7F;
  fp8.data_bytes[1 + 3 * 256 + 5] = 0xFF;
  cpu_linear(fp8.view, x.data(), 1, y.data(), pool, options);
  EXPECT_FALSE(std::isnan(y[0]));
  EXPECT_TRUE(std::isnan(y[1])) << "e4m3fn 0x7F";
  EXPECT_FALSE(std::isnan(y[2]));
  EXPECT_TRUE(std::isnan(y[3])) << "e4m3fn 0xFF";

  Weight nv = random_linear_weight(WeightFormat::kNvfp4, 4, 256, 401);
  nv.scale_bytes[1 + 2 * 16 + 9] = 0x7F;  // row 2, block 9
  cpu_linear(nv.view, x.data(), 1, y.data(), pool, options);
  EXPECT_TRUE(std::isnan(y[2])) << "nvfp4 scale 0x7F";
  EXPECT_FALSE(std::isnan(y[1]));

  Weight mx = random_linear_weight(WeightFormat::kMxfp4, 4, 256, 402);
  mx.scale_bytes[1 + 0 * 8 + 3] = 0xFF;                                 // row 0, block 3
  for (int b = 0; b < 8; ++b) mx.scale_bytes[1 + 1 * 8 + b] = 0x00;     // row 1 all 2^-127
  for (int i = 0; i < 128; ++i) mx.data_bytes[1 + 1 * 128 + i] = 0x66;  // every element 4
  cpu_linear(mx.view, x.data(), 1, y.data(), pool, options);
  EXPECT_TRUE(std::isnan(y[0])) << "e8m0 0xFF";
  EXPECT_EQ(y[1], static_cast<float>(256 * 4 * 0x1p-127)) << "e8m0 0x00";
  EXPECT_FALSE(std::isnan(y[3]));

  Weight m8 = random_linear_weight(WeightFormat::kMxfp8, 4, 256, 403);
  m8.scale_bytes[1 + 2 * 8 + 5] = 0xFF;                                 // row 2, block 5
  for (int b = 0; b < 8; ++b) m8.scale_bytes[1 + 3 * 8 + b] = 0x00;     // row 3 all 2^-127
  for (int i = 0; i < 256; ++i) m8.data_bytes[1 + 3 * 256 + i] = 0x48;  // every element 4
  m8.data_bytes[1 + 1 * 256 + 77] = 0xFF;                               // e4m3fn NaN in row 1
  cpu_linear(m8.view, x.data(), 1, y.data(), pool, options);
  EXPECT_FALSE(std::isnan(y[0]));
  EXPECT_TRUE(std::isnan(y[1])) << "mxfp8 e4m3fn 0xFF";
  EXPECT_TRUE(std::isnan(y[2])) << "mxfp8 e8m0 0xFF";
  EXPECT_EQ(y[3], static_cast<float>(256 * 4 * 0x1p-127)) << "mxfp8 e8m0 0x00";
}

INSTANTIATE_TEST_SUITE_P(AllPaths, CpuLinearPath, ::testing::ValuesIn(kPaths), path_param_name);

// ---- API ----------------------------------------------------------------------------------------

TEST(CpuLinear, DefaultEntryPointsAgreeWithExplicitDefaultIsa) {
  const Weight w = random_linear_weight(WeightFormat::kBF16, 37, 333, 500);
  Activations x = random_activations(3, 333, 501);
  ThreadPool pool(2);
  std::vector<float> a(3 * 37), b(3 * 37), c(3 * 37);
  cpu_linear(w.view, x.data(), 3, a.data(), pool);
  CpuLinearOptions options;
  options.isa = default_cpu_isa();
  cpu_linear(w.view, x.data(), 3, b.data(), pool, options);
  cpu_linear_op(w.view, x.data(), 3, c.data(), nullptr, CpuLinearOptions{});
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
}

TEST(CpuLinear, BackendTableRunsItWithTheConfiguredPrecision) {
  const Weight w = random_linear_weight(WeightFormat::kBF16, 37, 333, 502);
  const int64_t tokens = 16;  // a batch: the bf16 GEMM where the CPU has one
  Activations x = random_activations(tokens, 333, 503);
  ThreadPool pool(2);
  std::vector<std::vector<float>> outputs;
  for (const auto p : {ActivationPrecision::kF32, ActivationPrecision::kBF16}) {
    CpuKernelConfig config;
    config.activations = p;
    std::vector<float> got(tokens * 37), want(tokens * 37);
    cpu_kernel_ops(config).linear(w.view, x.data(), tokens, got.data(), &pool);
    cpu_linear(w.view, x.data(), tokens, want.data(), pool, config.linear());
    EXPECT_EQ(got, want) << activation_precision_name(p);
    outputs.push_back(got);
  }
  // Not vacuous where bf16 kernels exist: the two configurations compute differently.
  if (cpu_features().avx512_bf16 && default_cpu_isa() == CpuIsa::kAvx512) {
    EXPECT_NE(outputs[0], outputs[1]);
  }
  const std::vector<std::string_view>& fallbacks = kernel_ops(BackendKind::kCpu).from_reference;
  EXPECT_EQ(std::find(fallbacks.begin(), fallbacks.end(), "linear"), fallbacks.end());
}

TEST(CpuLinear, FeaturesAreConsistent) {
  const CpuFeatures& f = cpu_features();
  EXPECT_TRUE(!f.avx512 || f.avx2);
  EXPECT_TRUE(!f.avx512_bf16 || f.avx512);
  EXPECT_TRUE(cpu_supports(default_cpu_isa()));
  EXPECT_EQ(parse_cpu_isa("avx2", "test"), CpuIsa::kAvx2);
  EXPECT_THROW(parse_cpu_isa("sse9", "test"), Error);
}

void expect_error(const WeightView& w, const float* x, int64_t tokens, float* y,
                  const std::string& needle, CpuIsa isa = CpuIsa::kScalar) {
  ThreadPool pool(1);
  CpuLinearOptions options;
  options.isa = isa;
  try {
    cpu_linear(w, x, tokens, y, pool, options);
    ADD_FAILURE() << "no error, expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(CpuLinear, RejectsUnusableViews) {
  std::vector<float> x(64, 1.0f), y(64);
  Weight mx = random_linear_weight(WeightFormat::kMxfp4, 2, 64, 600);
  WeightView bad = mx.view;
  bad.cols = 48;
  expect_error(bad, x.data(), 1, y.data(), "mxfp4 input width 48");
  Weight nv = random_linear_weight(WeightFormat::kNvfp4, 2, 32, 601);
  bad = nv.view;
  bad.cols = 24;
  expect_error(bad, x.data(), 1, y.data(), "nvfp4 input width 24");
  bad = nv.view;
  bad.scales = nullptr;
  expect_error(bad, x.data(), 1, y.data(), "no scales");
  Weight fp8 = random_linear_weight(WeightFormat::kFp8Block, 2, 32, 602);
  bad = fp8.view;
  bad.block_cols = 0;
  expect_error(bad, x.data(), 1, y.data(), "tile 128x0");
  bad = fp8.view;
  bad.data = nullptr;
  expect_error(bad, x.data(), 1, y.data(), "no data");
  bad = fp8.view;
  bad.rows = 0;
  expect_error(bad, x.data(), 1, y.data(), "not positive");
  expect_error(fp8.view, x.data(), -1, y.data(), "tokens = -1");
  expect_error(fp8.view, nullptr, 1, y.data(), "x of 1 tokens is null");
  for (CpuIsa isa : {CpuIsa::kAvx2, CpuIsa::kAvx512})
    if (!cpu_supports(isa)) expect_error(fp8.view, x.data(), 1, y.data(), "options.isa", isa);
}

// The AMX row kernel (calls of kAmxRowMinTokens to kAmxRowTokens tokens on CPUs with AMX; on the
// tile emulator too, amx_modes.h): FP8
// tiles whose rows are not a multiple of the 16-row tiles and whose scale rows (48, 16) end inside
// a pair of row tiles, partial last pieces of 64 columns, FP8 per channel. Each activation times
// its tile's scale is split into hi + lo (or rounded), and each 32-column block sums into one f32
// in turn: the bound of check_path for that kernel. Each result element is computed alone, so a
// token's outputs are the same bits in a call of 3 tokens as in one of 8.
class CpuLinearAmxRows : public AmxModeTest {};

TEST_P(CpuLinearAmxRows, MatchTheReferenceAndDoNotDependOnTheOtherTokens) {
  struct Shape {
    WeightFormat format;
    int64_t rows, cols;
    int br, bc;
  };
  const Shape shapes[] = {{WeightFormat::kFp8Block, 257, 1000, 48, 64},
                          {WeightFormat::kFp8Block, 33, 200, 16, 128},
                          {WeightFormat::kFp8Block, 100, 64, 128, 128},
                          {WeightFormat::kFp8Channel, 37, 200, 128, 128}};
  uint32_t seed = 800;
  static ThreadPool two(2);
  for (const Shape& s : shapes)
    for (const ActivationPrecision p : {ActivationPrecision::kBF16x2, ActivationPrecision::kBF16}) {
      const Weight w = random_linear_weight(s.format, s.rows, s.cols, seed++, s.br, s.bc);
      Activations x = random_activations(kAmxRowTokens, s.cols, seed++);
      CpuLinearOptions options;
      options.activations = p;
      options.min_bytes_per_thread = 0;
      std::vector<float> all(static_cast<size_t>(kAmxRowTokens * s.rows));
      cpu_linear(w.view, x.data(), kAmxRowTokens, all.data(), two, options);
      for (const int64_t tokens : {kAmxRowMinTokens, int64_t{5}, kAmxRowTokens}) {
        const bool split = p == ActivationPrecision::kBF16x2;
        // Per channel the activations are split (or rounded) as they are; per tile the product
        // with the tile's scale is, after its f32 rounding.
        const bool tiles = s.format == WeightFormat::kFp8Block;
        const std::vector<float> seen = split ? split_to_bf16_pair(x.data(), tokens * s.cols)
                                              : rounded_to_bf16(x.data(), tokens * s.cols);
        const Reference ref = reference(w.view, tiles ? x.data() : seen.data(), tokens);
        const double a = !tiles ? 0.0 : split ? 0x1p-16 + 0x1p-24 : 0x1p-8 + 0x1p-24;
        std::vector<float> y(static_cast<size_t>(tokens * s.rows));
        cpu_linear(w.view, x.data(), tokens, y.data(), two, options);
        for (int64_t i = 0; i < tokens * s.rows; ++i) {
          const std::string what =
              std::string(weight_format_name(s.format)) + " [" + std::to_string(s.rows) + ", " +
              std::to_string(s.cols) + "] tile " + std::to_string(s.br) + "x" +
              std::to_string(s.bc) + " " + activation_precision_name(p) + ", " +
              std::to_string(tokens) + " tokens: token " + std::to_string(i / s.rows) + " row " +
              std::to_string(i % s.rows);
          const double bound = ((s.cols + 32) * 0x1p-24 + a) * ref.magnitude[i] + 1e-30;
          ASSERT_LE(std::fabs(y[i] - ref.y[i]), bound) << what;
          ASSERT_EQ(std::memcmp(&y[i], &all[i], 4), 0) << what << " differs in the 8-token call";
        }
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Modes, CpuLinearAmxRows,
                         ::testing::Values(AmxMode::kCpu, AmxMode::kEmulated), amx_mode_name);

// ---- The f32 GEMM's arithmetic, bit for bit -----------------------------------------------------

// What linear_gemm_f32-inl.h computes for (row r, token x): each weight's exact value without the
// row's scale (FP8 per channel, NVFP4's global) or its tile's (FP8 tiles: the activation is
// multiplied by it instead, rounded to f32); per 1024-column chunk one sum per lane (lane = column
// mod lanes; fmaf in column order, the padding past cols adding zeros); the lanes added in the
// kernel's tree (halves of 16, 8, 4, then 2 lanes); the chunks added in turn; times the row scale.
float f32_gemm_model(const WeightView& w, int64_t r, const std::vector<double>& row, const float* x,
                     int lanes) {
  float row_scale = 1.0f;
  if (w.format == WeightFormat::kFp8Channel) row_scale = get_f32(w.scales, r);
  if (w.format == WeightFormat::kNvfp4) row_scale = w.global_scale;
  const bool tiles = w.format == WeightFormat::kFp8Block;
  auto factor = [&](int64_t c) -> float {  // what a weight's value is divided by
    if (!tiles) return row_scale;
    const int64_t tiles_per_row = (w.cols + w.block_cols - 1) / w.block_cols;
    return get_f32(w.scales, r / w.block_rows * tiles_per_row + c / w.block_cols);
  };
  const int64_t padded = (w.cols + lanes - 1) / lanes * lanes;
  float y = 0.0f;
  for (int64_t c0 = 0; c0 < padded; c0 += 1024) {
    std::vector<float> acc(lanes, 0.0f);
    for (int64_t c = c0; c < std::min<int64_t>(padded, c0 + 1024); ++c) {
      if (c >= w.cols) continue;                                   // zeros: fmaf(0, 0, acc) is acc
      const float value = static_cast<float>(row[c] / factor(c));  // exact
      const float xv = tiles ? x[c] * factor(c) : x[c];
      acc[c % lanes] = std::fmaf(value, xv, acc[c % lanes]);
    }
    for (int half = lanes / 2; half >= 1; half /= 2)
      for (int i = 0; i < half; ++i) acc[i] = acc[i] + acc[i + half];
    y = c0 == 0 ? acc[0] : y + acc[0];
  }
  return y * row_scale;
}

TEST(CpuLinearF32Gemm, SumsInItsStatedOrderBitForBit) {
  uint32_t seed = 1500;
  for (const CpuIsa isa : {CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (!cpu_supports(isa)) continue;
    const Path path{isa, ActivationPrecision::kF32};
    const int lanes = isa == CpuIsa::kAvx512 ? 16 : 8;
    for (const WeightFormat format :
         {WeightFormat::kF32, WeightFormat::kBF16, WeightFormat::kFp8Block,
          WeightFormat::kFp8Channel, WeightFormat::kMxfp4, WeightFormat::kNvfp4,
          WeightFormat::kMxfp8}) {
      const bool blocks = format == WeightFormat::kMxfp4 || format == WeightFormat::kNvfp4 ||
                          format == WeightFormat::kMxfp8;
      for (const int64_t cols :
           blocks ? std::vector<int64_t>{32, 2080} : std::vector<int64_t>{33, 2100}) {
        // FP8 tiles of 16 × 48: tile rows and columns that cut the row groups and the chunks.
        const Weight w = random_linear_weight(format, 37, cols, seed++, 16, 48);
        for (const int64_t tokens : {format == WeightFormat::kNvfp4 ? 64 : 32, 70}) {
          ASSERT_TRUE(takes_f32_gemm(path, w.view, tokens));
          Activations x = random_activations(tokens, cols, seed++);
          CpuLinearOptions options;
          options.isa = isa;
          options.activations = ActivationPrecision::kF32;
          options.min_bytes_per_thread = 0;
          static ThreadPool one(1), two(2);
          std::vector<float> y1(tokens * w.view.rows), y2(tokens * w.view.rows);
          cpu_linear(w.view, x.data(), tokens, y1.data(), one, options);
          cpu_linear(w.view, x.data(), tokens, y2.data(), two, options);
          std::vector<double> row;
          for (int64_t r = 0; r < w.view.rows; ++r) {
            decode_row(w.view, r, row);
            for (int64_t t = 0; t < tokens; ++t) {
              const float want = f32_gemm_model(w.view, r, row, x.data() + t * cols, lanes);
              const size_t i = t * w.view.rows + r;
              ASSERT_EQ(y1[i], want)
                  << format_name(format) << " " << cpu_isa_name(isa) << " [" << w.view.rows << ", "
                  << cols << "] token " << t << " row " << r;
              ASSERT_EQ(std::memcmp(&y1[i], &y2[i], 4), 0) << "1 and 2 threads differ";
            }
          }
        }
      }
    }
  }
}

TEST(CpuLinear, ZeroTokensWritesNothing) {
  const Weight w = random_linear_weight(WeightFormat::kF32, 3, 5, 700);
  ThreadPool pool(1);
  float y = 42.0f;
  cpu_linear(w.view, nullptr, 0, &y, pool);
  EXPECT_EQ(y, 42.0f);
}

}  // namespace
}  // namespace minimax
