// The tile emulator (kernels/cpu/amx_emulation-inl.h): tdpbf16ps as Intel's pseudocode defines it
// on values whose sums are exact, partial tile shapes, denormals read as zero; and the emulated
// AMX linear kernels equal the CPU's tiles bit for bit where it has AMX (the attention kernel's
// twin of that check is in amx_attention_test.cc). That equality is what lets the EmulatedAmx
// cases of the kernel tests stand for the tiles on CPUs without AMX.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "amx_modes.h"
#include "formats/float_formats.h"
#include "kernels/cpu/amx_emulation-inl.h"
#include "kernels/cpu/linear.h"
#include "random_weights.h"

namespace minimax {
namespace {

namespace emu = amx_emulator;

uint16_t bf16(float v) { return f32_to_bf16(v); }

// A (2 rows × 3 pairs) · B (3 rows × 2 pairs) into C (2 × 2), on tiles configured narrower than
// the 64-byte rows: every sum small integers, so exact whatever the order.
TEST(AmxEmulator, DotProductOfPairsIntoPartialTiles) {
  uint8_t rows[8] = {2, 2, 3, 0, 0, 0, 0, 0};
  const uint16_t colsb[8] = {8, 12, 8, 0, 0, 0, 0, 0};  // C: 2 dwords, A: 3 pairs, B: 2 pairs
  emu::configure(colsb, rows);
  // A[m] pairs: (a0, a1) per k.
  const uint16_t a[2][6] = {{bf16(1), bf16(2), bf16(3), bf16(4), bf16(5), bf16(6)},
                            {bf16(-1), bf16(0), bf16(2), bf16(-2), bf16(1), bf16(1)}};
  // B[k] pairs: (b0, b1) per n.
  const uint16_t b[3][4] = {{bf16(1), bf16(1), bf16(2), bf16(0)},
                            {bf16(0), bf16(3), bf16(1), bf16(1)},
                            {bf16(4), bf16(-1), bf16(0), bf16(2)}};
  const float c0[2][2] = {{100, 200}, {300, 400}};
  emu::load(1, a, sizeof a[0]);
  emu::load(2, b, sizeof b[0]);
  emu::load(0, c0, sizeof c0[0]);
  emu::dpbf16ps(0, 1, 2);
  float c[2][2] = {};
  emu::store(0, c, sizeof c[0]);
  for (int m = 0; m < 2; ++m)
    for (int n = 0; n < 2; ++n) {
      double want = c0[m][n];
      for (int k = 0; k < 3; ++k)
        want += double(bf16_to_f32(a[m][2 * k])) * bf16_to_f32(b[k][2 * n]) +
                double(bf16_to_f32(a[m][2 * k + 1])) * bf16_to_f32(b[k][2 * n + 1]);
      EXPECT_EQ(c[m][n], want) << "m " << m << " n " << n;
    }
  // A load past the configured width leaves zeros; bytes past the configured rows are not stored.
  float wide[2][4];
  std::fill(&wide[0][0], &wide[0][0] + 8, -7.0f);
  emu::store(0, wide, sizeof wide[0]);
  EXPECT_EQ(wide[0][2], -7.0f);
  EXPECT_EQ(wide[1][3], -7.0f);
}

// Denormal bf16 inputs count as zero and a denormal result is flushed (DAZ, FTZ).
TEST(AmxEmulator, DenormalsAreZero) {
  uint8_t rows[8] = {1, 1, 1, 0, 0, 0, 0, 0};
  const uint16_t colsb[8] = {4, 4, 4, 0, 0, 0, 0, 0};
  emu::configure(colsb, rows);
  const uint16_t denormal = 0x0001, one = bf16(1.0f);
  const uint16_t a[2] = {denormal, one}, b[2] = {one, bf16(0x1p-130f)};  // 2^-130: denormal too
  emu::load(1, a, 4);
  emu::load(2, b, 4);
  emu::zero(0);
  emu::dpbf16ps(0, 1, 2);
  float c = -1;
  emu::store(0, &c, 4);
  EXPECT_EQ(c, 0.0f);
}

// The emulated kernels against the tiles: the same code over both, so any difference is the
// emulator's arithmetic or its tile state.
TEST(AmxEmulation, LinearKernelsEqualTheTilesBitForBit) {
  if (!cpu_features().amx_bf16) GTEST_SKIP() << "no AMX here to compare the emulator with";
  std::mt19937 rng(31);
  ThreadPool two(2);
  const WeightFormat formats[] = {WeightFormat::kBF16,       WeightFormat::kFp8Block,
                                  WeightFormat::kFp8Channel, WeightFormat::kMxfp8,
                                  WeightFormat::kMxfp4,      WeightFormat::kNvfp4};
  for (const WeightFormat format : formats) {
    const StoredWeight w = random_weight(format, 150, 384, 0.05, rng);
    // 3 and 8 tokens: the FP8 row kernel; 16 and 40: the GEMM (one and several token tiles).
    for (const int64_t tokens : {3, 8, 16, 40}) {
      std::vector<float> x(tokens * 384);
      std::normal_distribution<float> normal(0.0f, 1.0f);
      for (float& v : x) v = normal(rng);
      for (const ActivationPrecision p :
           {ActivationPrecision::kBF16x2, ActivationPrecision::kBF16}) {
        std::vector<float> tiles(tokens * 150), emulated(tiles.size());
        {
          const ScopedAmxMode mode(AmxMode::kCpu);
          CpuLinearOptions options;
          options.activations = p;
          options.min_bytes_per_thread = 0;
          cpu_linear(w.view, x.data(), tokens, tiles.data(), two, options);
        }
        {
          const ScopedAmxMode mode(AmxMode::kEmulated);
          CpuLinearOptions options;
          options.activations = p;
          options.min_bytes_per_thread = 0;
          cpu_linear(w.view, x.data(), tokens, emulated.data(), two, options);
        }
        for (size_t i = 0; i < tiles.size(); ++i)
          ASSERT_EQ(std::bit_cast<uint32_t>(tiles[i]), std::bit_cast<uint32_t>(emulated[i]))
              << weight_format_name(format) << " " << activation_precision_name(p) << ", " << tokens
              << " tokens: token " << i / 150 << " row " << i % 150 << ": " << tiles[i]
              << " on the tiles, " << emulated[i] << " emulated";
      }
    }
  }
}

}  // namespace
}  // namespace minimax
