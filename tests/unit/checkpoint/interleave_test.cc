// Gate/up interleaving: a fused kernel that reads rows g0, u0, g1, u1, ... of a converted FP8
// expert gives the reference SwiGLU-OAI output of the MXFP4 expert when handed the interleaved
// rows, and something else (silently) when handed the concatenated w13.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/error.h"
#include "checkpoint/mxfp4_to_fp8_exact.h"
#include "checkpoint/expert_interleave.h"
#include "formats/float_formats.h"

namespace minimax {
namespace {

struct Mxfp4Matrix {
  int64_t rows, cols;
  std::vector<uint8_t> packed, scales;

  double at(int64_t r, int64_t c) const {
    const uint8_t byte = packed[r * cols / 2 + c / 2];
    return e2m1_to_f64(c % 2 == 0 ? byte & 15 : byte >> 4) *
           e8m0_to_f64(scales[r * cols / 32 + c / 32]);
  }
};

Mxfp4Matrix random_mxfp4(int64_t rows, int64_t cols, std::mt19937& rng) {
  Mxfp4Matrix m{rows, cols, std::vector<uint8_t>(rows * cols / 2),
                std::vector<uint8_t>(rows * cols / 32)};
  for (uint8_t& b : m.packed) b = static_cast<uint8_t>(rng());
  for (uint8_t& s : m.scales) s = static_cast<uint8_t>(119 + rng() % 5);
  return m;
}

// The converter's row re-encoding: FP8 codes [rows, cols] and F32 scales [rows, 1], as bytes.
struct Fp8Matrix {
  std::vector<uint8_t> codes, scales;
};

Fp8Matrix to_fp8(const Mxfp4Matrix& m) {
  Fp8Matrix out{std::vector<uint8_t>(m.rows * m.cols), std::vector<uint8_t>(4 * m.rows)};
  for (int64_t r = 0; r < m.rows; ++r) {
    const uint8_t* packed = &m.packed[r * m.cols / 2];
    const uint8_t* scales = &m.scales[r * m.cols / 32];
    const auto s = choose_row_scale(scan_mxfp4_row(packed, scales, m.cols), Fp8Target::kOcp);
    EXPECT_TRUE(s.has_value());
    encode_row_fp8(packed, scales, m.cols, *s, &out.codes[r * m.cols]);
    const float scale = std::ldexp(1.0f, *s);
    std::memcpy(&out.scales[4 * r], &scale, 4);
  }
  return out;
}

double swiglu_oai(double gate, double up) {
  const double g = std::min(gate, 7.0), u = std::clamp(up, -7.0, 7.0);
  return g / (1.0 + std::exp(-1.702 * g)) * (u + 1.0);
}

// Reference: the MXFP4 expert in float64.
std::vector<double> reference(const Mxfp4Matrix& w1, const Mxfp4Matrix& w3, const Mxfp4Matrix& w2,
                              const std::vector<double>& x) {
  std::vector<double> h(w1.rows), y(w2.rows, 0.0);
  for (int64_t j = 0; j < w1.rows; ++j) {
    double g = 0, u = 0;
    for (int64_t k = 0; k < w1.cols; ++k) {
      g += w1.at(j, k) * x[k];
      u += w3.at(j, k) * x[k];
    }
    h[j] = swiglu_oai(g, u);
  }
  for (int64_t i = 0; i < w2.rows; ++i)
    for (int64_t j = 0; j < w2.cols; ++j) y[i] += w2.at(i, j) * h[j];
  return y;
}

double fp8_row_dot(const uint8_t* codes, const uint8_t* scale_bytes, int64_t cols,
                   const std::vector<double>& x) {
  float scale;
  std::memcpy(&scale, scale_bytes, 4);
  double sum = 0;
  for (int64_t k = 0; k < cols; ++k) sum += fp8_to_f64(codes[k], Fp8Format::kE4M3FN) * scale * x[k];
  return sum;
}

// A fused FP8 MoE kernel of the gpt-oss kind: w13 row 2j is gate j, row 2j+1 is up j.
std::vector<double> fused_interleaved_kernel(const std::vector<uint8_t>& w13,
                                             const std::vector<uint8_t>& w13_scales,
                                             const Fp8Matrix& w2, int64_t intermediate,
                                             int64_t hidden, const std::vector<double>& x) {
  std::vector<double> h(intermediate), y(hidden, 0.0);
  for (int64_t j = 0; j < intermediate; ++j) {
    const double g = fp8_row_dot(&w13[(2 * j) * hidden], &w13_scales[4 * (2 * j)], hidden, x);
    const double u =
        fp8_row_dot(&w13[(2 * j + 1) * hidden], &w13_scales[4 * (2 * j + 1)], hidden, x);
    h[j] = swiglu_oai(g, u);
  }
  for (int64_t i = 0; i < hidden; ++i)
    y[i] = fp8_row_dot(&w2.codes[i * intermediate], &w2.scales[4 * i], intermediate, h);
  return y;
}

std::vector<uint8_t> concat(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  std::vector<uint8_t> out(a);
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

TEST(ExpertInterleave, InterleavedReadingMatchesTheReferenceAndConcatenatedDoesNot) {
  constexpr int64_t kHidden = 96, kIntermediate = 64;
  std::mt19937 rng(11);
  const Mxfp4Matrix w1 = random_mxfp4(kIntermediate, kHidden, rng);
  const Mxfp4Matrix w3 = random_mxfp4(kIntermediate, kHidden, rng);
  const Mxfp4Matrix w2 = random_mxfp4(kHidden, kIntermediate, rng);
  std::normal_distribution<double> normal;
  std::vector<double> x(kHidden);
  for (double& v : x) v = normal(rng);
  const std::vector<double> want = reference(w1, w3, w2, x);

  const Fp8Matrix f1 = to_fp8(w1), f3 = to_fp8(w3), f2 = to_fp8(w2);
  const InterleavedGateUp fused =
      interleave_expert_gate_up(f1.codes, f1.scales, f3.codes, f3.scales, kIntermediate);
  const std::vector<double> got =
      fused_interleaved_kernel(fused.weight, fused.scales, f2, kIntermediate, kHidden, x);
  double largest = 0;
  for (int64_t i = 0; i < kHidden; ++i) {
    // The FP8 weights are the MXFP4 values exactly and the sums run in the same order.
    EXPECT_EQ(got[i], want[i]) << "output " << i;
    largest = std::max(largest, std::fabs(want[i]));
  }

  const std::vector<double> wrong = fused_interleaved_kernel(
      concat(f1.codes, f3.codes), concat(f1.scales, f3.scales), f2, kIntermediate, kHidden, x);
  double worst = 0;
  for (int64_t i = 0; i < kHidden; ++i) worst = std::max(worst, std::fabs(wrong[i] - want[i]));
  EXPECT_GT(worst, 0.1 * largest) << "the concatenated reading should be visibly wrong";
}

TEST(ExpertInterleave, ConcatenatedAndSeparateInputsGiveTheSameLayout) {
  const std::vector<uint8_t> gate = {1, 2, 3, 4, 5, 6}, up = {11, 12, 13, 14, 15, 16};
  std::vector<uint8_t> a(12), b(12);
  interleave_gate_up_rows(gate, up, 2, a);
  EXPECT_EQ(a, (std::vector<uint8_t>{1, 2, 11, 12, 3, 4, 13, 14, 5, 6, 15, 16}));
  interleave_concatenated_gate_up(concat(gate, up), 2, b);
  EXPECT_EQ(a, b);
}

TEST(ExpertInterleave, RefusesMismatchedSizes) {
  const std::vector<uint8_t> gate(6), up(4);
  std::vector<uint8_t> out(12);
  EXPECT_THROW(interleave_gate_up_rows(gate, up, 2, out), Error);
  EXPECT_THROW(interleave_gate_up_rows(gate, gate, 4, out), Error);
  std::vector<uint8_t> small(10);
  EXPECT_THROW(interleave_gate_up_rows(gate, gate, 2, small), Error);
  EXPECT_THROW(interleave_concatenated_gate_up(std::vector<uint8_t>(6), 2, out), Error);
}

}  // namespace
}  // namespace minimax
