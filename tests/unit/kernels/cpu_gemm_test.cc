// Tests of the batch GEMM (kernels/cpu/linear_gemm.cc, or linear_amx.cc where the CPU has AMX, and
// linear_amx.cc on the tile emulator everywhere)
// through cpu_linear with ActivationPrecision::kBF16Batches: bf16, FP8 per channel and FP8 tiles
// (the published 128×128 and odd ones), rows, columns and tokens that are not multiples of the 4×4
// tile, the 32-column vector or the token block, one and two threads, against a float64 product.
//
// What the GEMM computes: each activation rounded to bf16 once (for FP8 tiles, the activation
// times its tile's scale, rounded in f32 and then to bf16), exact products, f32 sums. So the f32
// bound of cpu_linear_test.cc, |y − y_ref| ≤ (cols/8 + 32)·2^-24·Σ|w|·|x'|, holds against the
// reference computed with those rounded activations x' — which checks that the rounding is the
// only extra error — and against the exact x the error grows by at most 2^-8·Σ|w|·|x|.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "amx_modes.h"
#include "formats/float_formats.h"
#include "kernels/cpu/linear.h"

namespace minimax {
namespace {

struct GemmWeight {
  std::vector<uint8_t> data, scales;
  WeightView view;
  std::vector<double> values;  // [rows, cols] decoded codes, before any scale
  std::vector<float> scale;    // per row (channel) or per tile (block)
};

GemmWeight random_gemm_weight(WeightFormat format, int64_t rows, int64_t cols, int block_rows,
                              int block_cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.0005f, 0.02f);
  GemmWeight w;
  WeightView& v = w.view;
  v.format = format;
  v.rows = rows;
  v.cols = cols;
  w.values.resize(rows * cols);
  if (format == WeightFormat::kBF16) {
    w.data.resize(rows * cols * 2);
    for (int64_t i = 0; i < rows * cols; ++i) {
      const uint16_t b = f32_to_bf16(normal(rng));
      std::memcpy(w.data.data() + 2 * i, &b, 2);
      w.values[i] = bf16_to_f32(b);
    }
  } else {
    w.data.resize(rows * cols);
    for (int64_t i = 0; i < rows * cols; ++i) {
      int c;
      do c = byte(rng);
      while ((c & 0x7F) == 0x7F);  // no NaN codes
      w.data[i] = static_cast<uint8_t>(c);
      w.values[i] = fp8_to_f64(w.data[i], Fp8Format::kE4M3FN);
    }
    v.block_rows = block_rows;
    v.block_cols = block_cols;
    const int64_t n =
        format == WeightFormat::kFp8Channel
            ? rows
            : (rows + block_rows - 1) / block_rows * ((cols + block_cols - 1) / block_cols);
    for (int64_t i = 0; i < n; ++i) w.scale.push_back(scale(rng));
    v.scales = w.scale.data();
  }
  v.data = w.data.data();
  return w;
}

// The scale of weight (r, c), and the factor the GEMM folds into the activation.
float weight_scale(const GemmWeight& w, int64_t r, int64_t c) {
  const WeightView& v = w.view;
  if (v.format == WeightFormat::kBF16) return 1.0f;
  if (v.format == WeightFormat::kFp8Channel) return w.scale[r];
  return w
      .scale[r / v.block_rows * ((v.cols + v.block_cols - 1) / v.block_cols) + c / v.block_cols];
}

void check(const GemmWeight& w, int64_t tokens, uint32_t seed, const std::string& what) {
  const WeightView& v = w.view;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(1 + tokens * v.cols);  // one float in: misaligned
  for (float& f : x) f = normal(rng);
  const float* xp = x.data() + 1;

  CpuLinearOptions options;
  options.activations = ActivationPrecision::kBF16Batches;
  options.min_bytes_per_thread = 0;
  ThreadPool one(1), two(2);
  std::vector<float> y1(tokens * v.rows, -1.0f), y2(tokens * v.rows, -2.0f);
  cpu_linear(v, xp, tokens, y1.data(), one, options);
  cpu_linear(v, xp, tokens, y2.data(), two, options);

  constexpr double u = 1.0 / (1 << 24);
  // On AMX each output sums its products in one f32 in turn, the activation rounded alone; FP8
  // tiles 64k wide take w exactly and scale each tile's sum, other tiles a multiple of 16 wide
  // take w · scale as bf16 hi + lo (within 2^-16).
  const bool amx = amx_usable() && (v.format != WeightFormat::kFp8Block || v.block_cols % 16 == 0);
  const bool block = v.format == WeightFormat::kFp8Block && !amx;
  const bool amx_block = v.format == WeightFormat::kFp8Block && amx && v.block_cols % 64 != 0;
  const double terms = amx ? static_cast<double>(v.cols) : v.cols / 8.0;
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t r = 0; r < v.rows; ++r) {
      double rounded = 0, exact = 0, magnitude = 0, exact_magnitude = 0;
      for (int64_t c = 0; c < v.cols; ++c) {
        const float xv = xp[t * v.cols + c];
        const float s = weight_scale(w, r, c);
        const double wv = w.values[r * v.cols + c];
        // x' as the GEMM forms it; the channel scale multiplies the sum instead.
        const double xr = block ? bf16_to_f32(f32_to_bf16(xv * s)) : bf16_to_f32(f32_to_bf16(xv));
        const double term = wv * xr * (block ? 1.0 : s);
        rounded += term;
        magnitude += std::fabs(term);
        exact += wv * s * xv;
        exact_magnitude += std::fabs(wv * s * xv);
      }
      const size_t i = t * v.rows + r;
      const double bound = ((terms + 32) * u + (amx_block ? 0x1p-16 : 0.0)) * magnitude + 1e-30;
      ASSERT_LE(std::fabs(y1[i] - rounded), bound)
          << what << " token " << t << " row " << r << ": " << y1[i] << " vs " << rounded;
      ASSERT_LE(std::fabs(y1[i] - exact), bound + std::ldexp(1.0, -8) * exact_magnitude)
          << what << " token " << t << " row " << r;
      ASSERT_EQ(y1[i], y2[i]) << what << ": 1 and 2 threads differ at token " << t << " row " << r;
    }
}

// Each test on this CPU's GEMM (the AMX tiles where it has them, else vdpbf16ps) and on the AMX
// kernel over the tile emulator (amx_modes.h).
class CpuGemm : public AmxModeTest {
 protected:
  // The Cpu mode needs no AMX: without it the vdpbf16ps GEMM runs.
  std::string unavailable() const override {
    return cpu_features().avx512_bf16 ? "" : "no AVX512_BF16: the GEMM does not run";
  }
};

TEST_P(CpuGemm, Bf16OddShapes) {
  uint32_t seed = 1;
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{37, 333}, {5, 32}, {16, 1000}, {3, 7}})
    for (int64_t tokens : {8, 9, 14, 31}) {
      const GemmWeight w = random_gemm_weight(WeightFormat::kBF16, rows, cols, 0, 0, seed++);
      check(w, tokens, seed++,
            "bf16 [" + std::to_string(rows) + ", " + std::to_string(cols) + "] x " +
                std::to_string(tokens));
    }
}

TEST_P(CpuGemm, Fp8ChannelOddShapes) {
  uint32_t seed = 100;
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{37, 333}, {6, 64}, {19, 130}})
    for (int64_t tokens : {8, 11}) {
      const GemmWeight w = random_gemm_weight(WeightFormat::kFp8Channel, rows, cols, 0, 0, seed++);
      check(w, tokens, seed++,
            "fp8-channel [" + std::to_string(rows) + ", " + std::to_string(cols) + "] x " +
                std::to_string(tokens));
    }
}

TEST_P(CpuGemm, Fp8BlockTiles) {
  uint32_t seed = 200;
  struct Case {
    int64_t rows, cols;
    int block_rows, block_cols;
  };
  // Tiles that a 4-row tile straddles (3, 5 rows), narrower than a vector, and the published one.
  for (const Case& c : {Case{300, 260, 128, 128}, Case{37, 333, 3, 40}, Case{21, 70, 5, 16}})
    for (int64_t tokens : {8, 13}) {
      const GemmWeight w = random_gemm_weight(WeightFormat::kFp8Block, c.rows, c.cols, c.block_rows,
                                              c.block_cols, seed++);
      check(w, tokens, seed++,
            "fp8-block [" + std::to_string(c.rows) + ", " + std::to_string(c.cols) + "] tiles " +
                std::to_string(c.block_rows) + "x" + std::to_string(c.block_cols) + " x " +
                std::to_string(tokens));
    }
}

// More tokens than one block of bf16 activations (512 KiB: 124 tokens at 2100 columns), and
// rows wider than a column panel (1024: three panels of 704 here).
TEST_P(CpuGemm, ManyTokensAndWideRows) {
  const GemmWeight w = random_gemm_weight(WeightFormat::kBF16, 9, 2100, 0, 0, 300);
  check(w, 133, 301, "bf16 [9, 2100] x 133");
  const GemmWeight f = random_gemm_weight(WeightFormat::kFp8Block, 9, 2100, 4, 128, 302);
  check(f, 133, 303, "fp8-block [9, 2100] x 133");
}

// On AMX a block of few tokens walks the row panels outer and a large block the column chunks
// outer (linear_amx.cc); both sum each output over the same chunks in the same order, so a
// token's row is the same bits in a call of 16 tokens and in one of 400 (bf16x2 and bf16; FP8
// tiles and bf16; rows of 3072 columns, six chunks, and of 260).
TEST_P(CpuGemm, AmxLoopOrdersSumAlike) {
  if (!amx_usable()) GTEST_SKIP() << "no AMX here (the EmulatedAmx case runs it)";
  const int64_t cols = 3072, rows = 40, many = 400, few = 16;
  const GemmWeight tiles = random_gemm_weight(WeightFormat::kFp8Block, rows, cols, 128, 128, 600);
  const GemmWeight bf16 = random_gemm_weight(WeightFormat::kBF16, rows, cols, 0, 0, 601);
  // 260 columns: one 384-column chunk of three 128-wide tile segments, past the 320 padded ones.
  const GemmWeight odd = random_gemm_weight(WeightFormat::kFp8Block, rows, 260, 128, 128, 603);
  std::vector<float> x(many * cols);
  std::mt19937 rng(602);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& f : x) f = normal(rng);
  ThreadPool pool(1);
  for (const GemmWeight* w : {&tiles, &bf16, &odd})
    for (auto act : {ActivationPrecision::kBF16x2, ActivationPrecision::kBF16}) {
      CpuLinearOptions options;
      options.activations = act;
      const int64_t width = w->view.cols;
      std::vector<float> all(many * rows), some(few * rows);
      cpu_linear(w->view, x.data(), many, all.data(), pool, options);
      const int64_t at = 200;  // tokens [200, 216) of the large call
      cpu_linear(w->view, x.data() + at * width, few, some.data(), pool, options);
      for (int64_t i = 0; i < few * rows; ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(some[i]), std::bit_cast<uint32_t>(all[at * rows + i]))
            << weight_format_name(w->view.format) << " " << activation_precision_name(act)
            << ": token " << at + i / rows << " row " << i % rows;
    }
}

// Below kBatchTokens a kBF16Batches call is the f32 path, bit for bit.
TEST_P(CpuGemm, SmallCallsStayF32) {
  const GemmWeight w = random_gemm_weight(WeightFormat::kBF16, 20, 100, 0, 0, 400);
  const int64_t tokens = kBatchTokens - 1;
  std::vector<float> x(tokens * 100);
  std::mt19937 rng(401);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& f : x) f = normal(rng);
  ThreadPool pool(1);
  CpuLinearOptions batches, f32;
  batches.activations = ActivationPrecision::kBF16Batches;
  f32.activations = ActivationPrecision::kF32;
  std::vector<float> a(tokens * 20), b(tokens * 20);
  cpu_linear(w.view, x.data(), tokens, a.data(), pool, batches);
  cpu_linear(w.view, x.data(), tokens, b.data(), pool, f32);
  EXPECT_EQ(a, b);
}

// NaN codes and NaN tile scales reach exactly the outputs they touch.
TEST_P(CpuGemm, NanPropagates) {
  GemmWeight w = random_gemm_weight(WeightFormat::kFp8Block, 8, 64, 4, 32, 500);
  w.data[1 * 64 + 5] = 0x7F;           // row 1: NaN code
  w.scale[1 * 2 + 1] = std::nanf("");  // rows 4-7, columns 32-63: NaN scale
  const int64_t tokens = 8;
  std::vector<float> x(tokens * 64, 0.5f), y(tokens * 8);
  ThreadPool pool(1);
  CpuLinearOptions options;
  options.activations = ActivationPrecision::kBF16Batches;
  cpu_linear(w.view, x.data(), tokens, y.data(), pool, options);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t r = 0; r < 8; ++r)
      EXPECT_EQ(std::isnan(y[t * 8 + r]), r == 1 || r >= 4) << "token " << t << " row " << r;
}

INSTANTIATE_TEST_SUITE_P(Modes, CpuGemm, ::testing::Values(AmxMode::kCpu, AmxMode::kEmulated),
                         amx_mode_name);

}  // namespace
}  // namespace minimax
