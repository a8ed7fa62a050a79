// A linear layer's weight in the form the kernels read: zero-copy views of the checkpoint's own
// bytes (or of a repacked copy made at load), with the format's scales already as f32 where the
// checkpoint stores them as another float type. Shape is [rows = out, cols = in], row-major.
#pragma once

#include <cstdint>
#include <string_view>

namespace minimax {

enum class WeightFormat : uint8_t {
  kF32,         // data: f32 [rows, cols]
  kBF16,        // data: bf16 [rows, cols]
  kFp8Block,    // data: e4m3fn codes [rows, cols]; scales: f32 [ceil(rows/br), ceil(cols/bc)]
  kFp8Channel,  // data: e4m3fn codes [rows, cols]; scales: f32 [rows]
  kMxfp4,       // data: packed e2m1 [rows, cols/2], low nibble = even column; scales: e8m0 [rows,
                // cols/32]
  kNvfp4,       // data: packed e2m1 [rows, cols/2]; scales: e4m3fn [rows, cols/16]; global_scale
};

struct WeightView {
  WeightFormat format = WeightFormat::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
  const uint8_t* data = nullptr;
  const void* scales = nullptr;  // f32 for kFp8Block / kFp8Channel, raw codes for kMxfp4 / kNvfp4
  float global_scale = 1.0f;     // kNvfp4: weight_scale_2
  int block_rows = 128;          // kFp8Block tile
  int block_cols = 128;
};

// "f32", "bf16", "fp8-block", "fp8-channel", "mxfp4", "nvfp4".
std::string_view weight_format_name(WeightFormat format);
// True for the formats that carry scales (everything but f32 and bf16).
bool is_quantized_format(WeightFormat format);
// Bytes of `data` per weight row (scales not counted).
int64_t weight_row_bytes(const WeightView& w);

}  // namespace minimax
