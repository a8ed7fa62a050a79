// The quantizer's whole-tensor encoders: every layout decodes back to the source within the
// layout's own rounding bound, scales have the layout's shape, and the error grows as it should.
#include "checkpoint/weight_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "checkpoint/tiny_checkpoint.h"
#include "formats/safetensors_writer.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

std::vector<StoredTensor> layout(LinearLayout layout, int64_t rows, int64_t cols) {
  const std::string m = "layer.w";
  const StoredTensor codes{m + ".weight", DType::kF8_E4M3, {rows, cols}};
  switch (layout) {
    case LinearLayout::kFp8Block:
      return {codes,
              {m + ".weight_scale_inv", DType::kF32, {(rows + 127) / 128, (cols + 127) / 128}}};
    case LinearLayout::kFp8Channel:
      return {codes, {m + ".weight_scale", DType::kF32, {rows, 1}}};
    case LinearLayout::kQuarkFp8Channel:
      return {codes, {m + ".weight_scale", DType::kF32, {rows}}};
    case LinearLayout::kQuarkFp8Tensor:
      return {codes, {m + ".weight_scale", DType::kF32, {}}, {m + ".input_scale", DType::kF32, {}}};
    case LinearLayout::kMxfp4:
      return {{m + ".weight", DType::kU8, {rows, cols / 2}},
              {m + ".weight_scale", DType::kU8, {rows, cols / 32}}};
    case LinearLayout::kMxfp8:
      return {codes, {m + ".weight_scale_inv", DType::kU8, {rows, cols / 32}}};
    case LinearLayout::kNvfp4:
      return {{m + ".weight", DType::kU8, {rows, cols / 2}},
              {m + ".weight_scale", DType::kF8_E4M3, {rows, cols / 16}},
              {m + ".weight_scale_2", DType::kF32, {}},
              {m + ".input_scale", DType::kF32, {}}};
    case LinearLayout::kBf16:
      break;
  }
  return {};
}

TEST(WeightCodec, EveryLayoutDecodesBackWithinItsRoundingBound) {
  const int64_t rows = 200, cols = 160;  // not multiples of 128: partial FP8 blocks
  std::vector<float> w(rows * cols);
  NormalStream rng(3, "w");
  for (auto& v : w) v = static_cast<float>(rng.next());
  // FP8 e4m3 keeps 3 mantissa bits (relative step 2^-3, half-step 2^-4 of the value's binade;
  // MXFP8's power-of-two block scale keeps the block top at 224..448, the same relative step);
  // MXFP4: grid step 0.5 under a block top of 4..8, where 6..8 saturates to 6 (at most 1/4 of
  // the block max); NVFP4: half an e2m1 step of the scaled block plus the e4m3 scale rounding.
  const std::vector<std::pair<LinearLayout, double>> cases = {
      {LinearLayout::kFp8Block, 1.0 / 16},
      {LinearLayout::kFp8Channel, 1.0 / 16},
      {LinearLayout::kQuarkFp8Channel, 1.0 / 16},
      {LinearLayout::kQuarkFp8Tensor, 1.0 / 16},
      {LinearLayout::kMxfp8, 1.0 / 16},
      {LinearLayout::kMxfp4, 0.26},
      {LinearLayout::kNvfp4, 0.2}};
  const fs::path dir = fs::temp_directory_path() / ("minimax_codec_" + std::to_string(::getpid()));
  for (auto [scheme, bound] : cases) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    auto stored = layout(scheme, rows, cols);
    auto encoded = encode_weight(w, rows, cols, scheme, stored);
    ASSERT_FALSE(stored.empty());
    ASSERT_EQ(encoded.size(), stored.size());
    std::vector<TensorDecl> decls;
    for (const auto& s : stored) decls.push_back({s.name, s.dtype, s.shape});
    for (size_t i = 0; i < stored.size(); ++i) {
      ASSERT_EQ(encoded[i].size(), decls[i].nbytes()) << stored[i].name;
    }
    SafetensorsWriter writer((dir / "model.safetensors").string(), decls);
    for (const auto& d : writer.order()) {
      for (size_t i = 0; i < stored.size(); ++i) {
        if (stored[i].name == d.name) writer.write_tensor(d.name, encoded[i]);
      }
    }
    writer.finish();
    TensorStore store(dir.string());
    auto back = decode_weight(store, "layer.w.weight", scheme, rows, cols);
    double worst = 0, total_error = 0;
    for (int64_t r = 0; r < rows; ++r) {
      double amax = 0;
      for (int64_t c = 0; c < cols; ++c) amax = std::max(amax, std::fabs(double(w[r * cols + c])));
      for (int64_t c = 0; c < cols; ++c) {
        double e = std::fabs(double(back[r * cols + c]) - w[r * cols + c]) / amax;
        worst = std::max(worst, e);
        total_error += e;
      }
    }
    EXPECT_LE(worst, bound) << linear_layout_name(scheme);
    EXPECT_GT(total_error, 0.0) << linear_layout_name(scheme) << " lost nothing: not quantized?";
  }
  fs::remove_all(dir);
}

TEST(WeightCodec, NormalStreamIsDeterministicAndKeyed) {
  NormalStream a(1, "x"), b(1, "x"), c(1, "y"), d(2, "x");
  double sum = 0, sum_sq = 0;
  bool differs_key = false, differs_seed = false;
  for (int i = 0; i < 20000; ++i) {
    double va = a.next();
    EXPECT_EQ(va, b.next());
    differs_key |= va != c.next();
    differs_seed |= va != d.next();
    sum += va;
    sum_sq += va * va;
  }
  EXPECT_TRUE(differs_key);
  EXPECT_TRUE(differs_seed);
  EXPECT_NEAR(sum / 20000, 0.0, 0.03);
  EXPECT_NEAR(sum_sq / 20000, 1.0, 0.05);
}

}  // namespace
}  // namespace minimax
