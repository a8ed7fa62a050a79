// Row and column slices of weight views (kernels/weight_view.h): for every format a slice decodes
// to exactly the matching part of the whole weight, and the reference and CPU linear kernels,
// which read rows through the view's strides, give on a slice exactly what they give on a dense
// copy of it (rows: exactly the whole weight's rows; columns: the partial products).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "formats/float_formats.h"
#include "kernels/cpu/linear.h"
#include "kernels/reference/reference_ops.h"
#include "kernels/reference/weight_rows.h"

namespace minimax {
namespace {

constexpr int64_t kRows = 96, kCols = 256;
constexpr int kTile = 64;  // FP8-block tile, small enough that slices cross tiles

struct Owned {
  std::vector<uint8_t> data, scales;
  WeightView view;
};

// Bytes of one dense row of scales, and how many scale rows a view has.
int64_t dense_scale_row_bytes(const WeightView& w) {
  WeightView dense = w;
  dense.scale_stride = 0;
  return weight_scale_stride(dense);
}
int64_t scale_rows(const WeightView& w) {
  if (w.format == WeightFormat::kFp8Block) return (w.rows + w.block_rows - 1) / w.block_rows;
  return w.format == WeightFormat::kF32 || w.format == WeightFormat::kBF16 ? 0 : w.rows;
}

Owned random_slice_weight(WeightFormat format, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> byte(0, 255);
  auto fp8_code = [&] {  // any code but the NaNs
    int c;
    do c = byte(rng);
    while ((c & 0x7F) == 0x7F);
    return static_cast<uint8_t>(c);
  };
  Owned w;
  WeightView& v = w.view;
  v.format = format;
  v.rows = kRows;
  v.cols = kCols;
  v.block_rows = v.block_cols = kTile;
  w.data.resize(kRows * weight_row_bytes(v));
  w.scales.resize(scale_rows(v) * dense_scale_row_bytes(v));
  auto put_f32 = [](std::vector<uint8_t>& bytes, size_t i, float f) {
    std::memcpy(bytes.data() + 4 * i, &f, 4);
  };
  switch (format) {
    case WeightFormat::kF32:
      for (size_t i = 0; i < w.data.size() / 4; ++i) put_f32(w.data, i, normal(rng));
      break;
    case WeightFormat::kBF16:
      for (size_t i = 0; i < w.data.size() / 2; ++i) {
        const uint16_t b = f32_to_bf16(normal(rng));
        std::memcpy(w.data.data() + 2 * i, &b, 2);
      }
      break;
    case WeightFormat::kFp8Block:
    case WeightFormat::kFp8Channel:
      for (uint8_t& b : w.data) b = fp8_code();
      for (size_t i = 0; i < w.scales.size() / 4; ++i) put_f32(w.scales, i, 0.01f + 0.1f * (i % 7));
      break;
    case WeightFormat::kMxfp4:
      for (uint8_t& b : w.data) b = static_cast<uint8_t>(byte(rng));
      for (uint8_t& s : w.scales) s = static_cast<uint8_t>(120 + byte(rng) % 10);
      break;
    case WeightFormat::kMxfp8:
      for (uint8_t& b : w.data) b = fp8_code();
      for (uint8_t& s : w.scales) s = static_cast<uint8_t>(120 + byte(rng) % 10);
      break;
    case WeightFormat::kNvfp4:
      for (uint8_t& b : w.data) b = static_cast<uint8_t>(byte(rng));
      for (uint8_t& s : w.scales) s = static_cast<uint8_t>(0x20 + byte(rng) % 0x40);
      v.global_scale = 0.75f;
      break;
  }
  v.data = w.data.data();
  v.scales = w.scales.empty() ? nullptr : w.scales.data();
  return w;
}

// A dense copy of any (strided) view, built by reading rows through its strides.
Owned compact(const WeightView& s) {
  Owned c;
  c.view = s;
  c.view.data_stride = c.view.scale_stride = 0;
  const int64_t row_bytes = weight_row_bytes(s);
  for (int64_t r = 0; r < s.rows; ++r) {
    const uint8_t* row = s.data + r * weight_data_stride(s);
    c.data.insert(c.data.end(), row, row + row_bytes);
  }
  const int64_t scale_bytes = dense_scale_row_bytes(c.view);
  for (int64_t r = 0; r < scale_rows(s); ++r) {
    const uint8_t* row = static_cast<const uint8_t*>(s.scales) + r * weight_scale_stride(s);
    c.scales.insert(c.scales.end(), row, row + scale_bytes);
  }
  c.view.data = c.data.data();
  c.view.scales = c.scales.empty() ? nullptr : c.scales.data();
  return c;
}

std::vector<float> activations(int64_t tokens, int64_t cols) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(tokens * cols);
  for (float& v : x) v = normal(rng);
  return x;
}

std::vector<float> run(bool cpu, const WeightView& w, const std::vector<float>& x, int64_t tokens,
                       ThreadPool& pool) {
  std::vector<float> y(tokens * w.rows);
  if (cpu) {
    CpuLinearOptions options;
    options.min_bytes_per_thread = 0;  // split even these small matrices across the pool
    cpu_linear(w, x.data(), tokens, y.data(), pool, options);
  } else {
    reference::linear(w, x.data(), tokens, y.data(), &pool);
  }
  return y;
}

class WeightSliceTest : public ::testing::TestWithParam<WeightFormat> {};

TEST_P(WeightSliceTest, RowSliceIsTheWholeWeightsRows) {
  const Owned whole = random_slice_weight(GetParam(), 11);
  const int64_t begin = 64, count = 32;
  const WeightView slice = slice_rows(whole.view, begin, count);
  std::vector<double> a(kCols), b(kCols);
  for (int64_t r = 0; r < count; ++r) {
    reference::decode_row(slice, r, a.data());
    reference::decode_row(whole.view, begin + r, b.data());
    ASSERT_EQ(a, b) << "row " << r;
  }
  ThreadPool pool(2);
  for (int64_t tokens : {1, 5}) {
    const std::vector<float> x = activations(tokens, kCols);
    for (bool cpu : {false, true}) {
      SCOPED_TRACE(cpu ? "cpu" : "reference");
      const std::vector<float> full = run(cpu, whole.view, x, tokens, pool);
      const std::vector<float> part = run(cpu, slice, x, tokens, pool);
      for (int64_t t = 0; t < tokens; ++t)
        for (int64_t r = 0; r < count; ++r)
          ASSERT_EQ(part[t * count + r], full[t * kRows + begin + r]) << t << "," << r;
    }
  }
}

TEST_P(WeightSliceTest, ColumnSliceGivesThePartialProducts) {
  const Owned whole = random_slice_weight(GetParam(), 12);
  ThreadPool pool(2);
  for (auto [begin, count] : {std::pair<int64_t, int64_t>{64, 128}, {128, 128}, {0, 64}}) {
    SCOPED_TRACE(begin);
    const WeightView slice = slice_cols(whole.view, begin, count);
    std::vector<double> a(count), b(kCols);
    for (int64_t r = 0; r < kRows; ++r) {
      reference::decode_row(slice, r, a.data());
      reference::decode_row(whole.view, r, b.data());
      ASSERT_EQ(a, std::vector<double>(b.begin() + begin, b.begin() + begin + count)) << r;
    }
    const Owned dense = compact(slice);
    for (int64_t tokens : {1, 5}) {
      const std::vector<float> x = activations(tokens, count);
      // The exact partial products of the whole weight's columns, summed in column order in
      // double as the reference kernel does.
      std::vector<float> expected(tokens * kRows);
      for (int64_t r = 0; r < kRows; ++r) {
        reference::decode_row(whole.view, r, b.data());
        for (int64_t t = 0; t < tokens; ++t) {
          double acc = 0;
          for (int64_t c = 0; c < count; ++c) acc += b[begin + c] * double(x[t * count + c]);
          expected[t * kRows + r] = static_cast<float>(acc);
        }
      }
      EXPECT_EQ(run(false, slice, x, tokens, pool), expected);
      // The CPU kernels read the strided slice exactly as a dense copy of it.
      EXPECT_EQ(run(true, slice, x, tokens, pool), run(true, dense.view, x, tokens, pool));
    }
  }
}

TEST_P(WeightSliceTest, SlicesOffTheBlockGridAreRefused) {
  const Owned whole = random_slice_weight(GetParam(), 13);
  EXPECT_THROW(slice_rows(whole.view, 90, 10, "w"), Error);  // past the end
  EXPECT_THROW(slice_cols(whole.view, 200, 100, "w"), Error);
  const bool blocked = GetParam() != WeightFormat::kF32 && GetParam() != WeightFormat::kBF16 &&
                       GetParam() != WeightFormat::kFp8Channel;
  if (blocked) {
    try {
      slice_cols(whole.view, 8, 64, "layers.0.q_proj");
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("layers.0.q_proj"));
    }
  } else {
    EXPECT_NO_THROW(slice_cols(whole.view, 8, 64, "w"));
  }
  if (GetParam() == WeightFormat::kFp8Block) {
    EXPECT_THROW(slice_rows(whole.view, 8, 8, "w"), Error);
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, WeightSliceTest,
                         ::testing::Values(WeightFormat::kF32, WeightFormat::kBF16,
                                           WeightFormat::kFp8Block, WeightFormat::kFp8Channel,
                                           WeightFormat::kMxfp4, WeightFormat::kNvfp4,
                                           WeightFormat::kMxfp8),
                         [](const auto& info) {
                           std::string name(weight_format_name(info.param));
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace minimax
