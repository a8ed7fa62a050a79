// Reference row decoding for every WeightFormat.
#include "kernels/reference/weight_rows.h"

#include <array>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "formats/float_formats.h"

namespace minimax::reference {
namespace {

const std::array<double, 256>& e4m3fn_table() {
  static const std::array<double, 256> table = [] {
    std::array<double, 256> t{};
    for (int c = 0; c < 256; ++c) t[c] = fp8_to_f64(static_cast<uint8_t>(c), Fp8Format::kE4M3FN);
    return t;
  }();
  return table;
}

float load_f32(const void* base, int64_t index) {
  float v;
  std::memcpy(&v, static_cast<const uint8_t*>(base) + 4 * index, 4);
  return v;
}

}  // namespace

void check_weight_view(const WeightView& w, const char* what) {
  if (w.data == nullptr || w.rows <= 0 || w.cols <= 0)
    fail("{}: empty {} weight view [{}, {}]", what, weight_format_name(w.format), w.rows, w.cols);
  const bool scaled = w.format != WeightFormat::kF32 && w.format != WeightFormat::kBF16;
  if (scaled && w.scales == nullptr)
    fail("{}: {} weight has no scales", what, weight_format_name(w.format));
  if (w.format == WeightFormat::kFp8Block && (w.block_rows <= 0 || w.block_cols <= 0))
    fail("{}: fp8-block tile {}x{} is not positive", what, w.block_rows, w.block_cols);
  if ((w.format == WeightFormat::kMxfp4 || w.format == WeightFormat::kMxfp8) && w.cols % 32 != 0)
    fail("{}: {} input width {} is not a multiple of 32", what, weight_format_name(w.format),
         w.cols);
  if (w.format == WeightFormat::kNvfp4 && w.cols % 16 != 0)
    fail("{}: nvfp4 input width {} is not a multiple of 16", what, w.cols);
}

void decode_row(const WeightView& w, int64_t row, double* out) {
  const int64_t n = w.cols;
  const uint8_t* data = w.data + row * weight_data_stride(w);
  const int64_t scale_stride = weight_scale_stride(w);
  switch (w.format) {
    case WeightFormat::kF32:
      for (int64_t c = 0; c < n; ++c) out[c] = load_f32(data, c);
      return;
    case WeightFormat::kBF16:
      for (int64_t c = 0; c < n; ++c) {
        uint16_t b;
        std::memcpy(&b, data + 2 * c, 2);
        out[c] = bf16_to_f32(b);
      }
      return;
    case WeightFormat::kFp8Block: {
      const auto& table = e4m3fn_table();
      const int64_t scale_cols = scale_stride / 4;  // floats per tile row (the parent's, if sliced)
      const int64_t scale_row = row / w.block_rows;
      for (int64_t c = 0; c < n; ++c)
        out[c] = table[data[c]] * load_f32(w.scales, scale_row * scale_cols + c / w.block_cols);
      return;
    }
    case WeightFormat::kFp8Channel: {
      const auto& table = e4m3fn_table();
      const double scale = load_f32(w.scales, row);
      for (int64_t c = 0; c < n; ++c) out[c] = table[data[c]] * scale;
      return;
    }
    case WeightFormat::kMxfp4: {
      const uint8_t* scales = static_cast<const uint8_t*>(w.scales) + row * scale_stride;
      for (int64_t c = 0; c < n; ++c) {
        const uint8_t nibble = (c % 2 == 0) ? (data[c / 2] & 0x0F) : (data[c / 2] >> 4);
        out[c] = e2m1_to_f64(nibble) * e8m0_to_f64(scales[c / 32]);
      }
      return;
    }
    case WeightFormat::kMxfp8: {
      const auto& table = e4m3fn_table();
      const uint8_t* scales = static_cast<const uint8_t*>(w.scales) + row * scale_stride;
      for (int64_t c = 0; c < n; ++c) out[c] = table[data[c]] * e8m0_to_f64(scales[c / 32]);
      return;
    }
    case WeightFormat::kNvfp4: {
      const auto& table = e4m3fn_table();
      const uint8_t* scales = static_cast<const uint8_t*>(w.scales) + row * scale_stride;
      for (int64_t c = 0; c < n; ++c) {
        const uint8_t nibble = (c % 2 == 0) ? (data[c / 2] & 0x0F) : (data[c / 2] >> 4);
        out[c] = e2m1_to_f64(nibble) * table[scales[c / 16]] * static_cast<double>(w.global_scale);
      }
      return;
    }
  }
  fail("decode_row: unknown weight format {}", static_cast<int>(w.format));
}

void decode_row(const WeightView& w, int64_t row, float* out) {
  std::vector<double> tmp(w.cols);
  decode_row(w, row, tmp.data());
  for (int64_t c = 0; c < w.cols; ++c) out[c] = static_cast<float>(tmp[c]);
}

}  // namespace minimax::reference
