// The f32-activation kernels of bf16, fp8-channel and mxfp4 weights sum in one shared order
// (even_odd_order, kernels/cpu/linear_internal.h), so an MXFP4 weight, its exact FP8 conversion
// (one power-of-two scale per row, checkpoint/mxfp4_to_fp8_exact.h, what `minimax convert`
// writes for routed experts) and its BF16 copy (what it writes for other MXFP4 tensors) give
// bit-identical outputs on every ISA path this CPU runs, for any token count, thread count and
// width (tails included). That is what makes a converted checkpoint's logits equal its source's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "checkpoint/mxfp4_to_fp8_exact.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cpu/linear.h"

namespace minimax {
namespace {

// One MXFP4 matrix and its two exact re-encodings.
struct ThreeLayouts {
  int64_t rows = 0, cols = 0;
  std::vector<uint8_t> packed, e8m0;  // MXFP4
  std::vector<uint8_t> fp8;           // e4m3 codes
  std::vector<float> fp8_scale;       // 2^S per row
  std::vector<uint8_t> bf16;          // little-endian bits
  WeightView view(WeightFormat format, const void* data, const void* scales) const {
    WeightView v;
    v.format = format;
    v.rows = rows;
    v.cols = cols;
    v.data = static_cast<const uint8_t*>(data);
    v.scales = scales;
    return v;
  }
  WeightView mxfp4_view() const { return view(WeightFormat::kMxfp4, packed.data(), e8m0.data()); }
  WeightView fp8_view() const {
    return view(WeightFormat::kFp8Channel, fp8.data(), fp8_scale.data());
  }
  WeightView bf16_view() const { return view(WeightFormat::kBF16, bf16.data(), nullptr); }
};

// Random nibbles (a few blocks all zero) and block scales spread over `span` binades around 2^-6,
// as trained expert weights are; every row stays within the converter's 13-binade window.
ThreeLayouts random_three(int64_t rows, int64_t cols, int span, Fp8Target target, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> nibble(0, 15), exponent(0, span), percent(0, 99);
  ThreeLayouts t;
  t.rows = rows;
  t.cols = cols;
  t.packed.resize(rows * cols / 2);
  t.e8m0.resize(rows * cols / 32);
  for (int64_t b = 0; b < rows * cols / 32; ++b) {
    const bool zero = percent(rng) < 5;
    t.e8m0[b] = static_cast<uint8_t>(127 - 6 - span / 2 + exponent(rng));
    for (int i = 0; i < 16; ++i)
      t.packed[b * 16 + i] = zero ? 0 : static_cast<uint8_t>(nibble(rng) | nibble(rng) << 4);
  }
  t.fp8.resize(rows * cols);
  t.fp8_scale.resize(rows);
  t.bf16.resize(rows * cols * 2);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* p = t.packed.data() + r * cols / 2;
    const uint8_t* s = t.e8m0.data() + r * cols / 32;
    const Mxfp4RowRange range = scan_mxfp4_row(p, s, cols);
    const std::optional<int> exp = choose_row_scale(range, target);
    if (!exp) throw std::runtime_error(describe_unrepresentable_row(range, target));
    encode_row_fp8(p, s, cols, *exp, t.fp8.data() + r * cols);
    t.fp8_scale[r] = std::ldexp(1.0f, *exp);
    EXPECT_EQ(first_fp8_mismatch(p, s, cols, *exp, t.fp8.data() + r * cols), -1);
    encode_row_bf16(p, s, cols, t.bf16.data() + r * cols * 2);
    EXPECT_EQ(first_bf16_mismatch(p, s, cols, t.bf16.data() + r * cols * 2), -1);
  }
  return t;
}

std::vector<float> run(const WeightView& w, const std::vector<float>& x, int64_t tokens, CpuIsa isa,
                       ThreadPool& pool) {
  CpuLinearOptions options;
  options.isa = isa;
  options.activations = ActivationPrecision::kF32;
  options.min_bytes_per_thread = 0;
  std::vector<float> y(tokens * w.rows, -1.0f);
  cpu_linear(w, x.data(), tokens, y.data(), pool, options);
  return y;
}

void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b,
                      const std::string& what, int64_t rows) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(std::memcmp(&a[i], &b[i], 4), 0)
        << what << ": token " << i / rows << " row " << i % rows << ": " << a[i] << " vs " << b[i]
        << " (difference " << a[i] - b[i] << ")";
}

TEST(ExactLayouts, Mxfp4ItsFp8AndItsBf16GiveTheSameBitsOnEveryIsa) {
  static ThreadPool one(1), two(2);
  // Widths: whole chunks of every kernel, and tails of one, two and three 32-column blocks.
  const int64_t shapes[][2] = {{37, 512}, {16, 96}, {9, 160}, {21, 224}, {8, 3072}};
  int checked = 0;
  for (const CpuIsa isa : {CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (!cpu_supports(isa)) continue;
    for (const auto& shape : shapes)
      for (const Fp8Target target : {Fp8Target::kOcp, Fp8Target::kGaudi2}) {
        const int64_t rows = shape[0], cols = shape[1];
        const ThreeLayouts t =
            random_three(rows, cols, 8, target, static_cast<uint32_t>(rows * 131 + cols));
        for (const int64_t tokens : {1, 2, 3, 5, 9, 17}) {
          std::mt19937 rng(static_cast<uint32_t>(tokens * 7 + cols));
          std::normal_distribution<float> normal(0.0f, 1.0f);
          std::vector<float> x(tokens * cols);
          for (float& v : x) v = normal(rng);
          const std::string what = std::string(cpu_isa_name(isa)) + " " +
                                   std::string(fp8_target_name(target)) + " [" +
                                   std::to_string(rows) + ", " + std::to_string(cols) + "] " +
                                   std::to_string(tokens) + " tokens";
          const std::vector<float> mx = run(t.mxfp4_view(), x, tokens, isa, one);
          expect_same_bits(mx, run(t.fp8_view(), x, tokens, isa, one), what + " fp8", rows);
          expect_same_bits(mx, run(t.bf16_view(), x, tokens, isa, one), what + " bf16", rows);
          expect_same_bits(mx, run(t.fp8_view(), x, tokens, isa, two), what + " fp8 2 threads",
                           rows);
          ++checked;
        }
      }
  }
  EXPECT_GT(checked, 0);
}

// The guarantee is not vacuous: two ISA levels sum the same decoded weights in different orders,
// and on these inputs that changes the last bits of some outputs; a kernel that left the shared
// order of its level would be caught the same way above.
TEST(ExactLayouts, AnotherSummationOrderChangesBits) {
  const ThreeLayouts t = random_three(64, 512, 8, Fp8Target::kOcp, 7);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(4 * 512);
  for (float& v : x) v = normal(rng);
  static ThreadPool one(1);
  const std::vector<float> scalar = run(t.mxfp4_view(), x, 4, CpuIsa::kScalar, one);
  for (const CpuIsa isa : {CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (!cpu_supports(isa)) continue;
    const std::vector<float> simd = run(t.mxfp4_view(), x, 4, isa, one);
    int differ = 0;
    for (size_t i = 0; i < simd.size(); ++i) differ += std::memcmp(&simd[i], &scalar[i], 4) != 0;
    EXPECT_GT(differ, 0) << cpu_isa_name(isa);
  }
}

}  // namespace
}  // namespace minimax
