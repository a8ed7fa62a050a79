// A linear layer's weight in the form the kernels read: zero-copy views of the checkpoint's own
// bytes (or of a repacked copy made at load), with the format's scales already as f32 where the
// checkpoint stores them as another float type. Shape is [rows = out, cols = in], row-major; a
// view may be a row or column slice of a larger weight (a rank's share), whose rows then lie
// `data_stride` bytes apart.
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
  kMxfp8,       // data: e4m3fn codes [rows, cols]; scales: e8m0 [rows, cols/32]
};

struct WeightView {
  WeightFormat format = WeightFormat::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
  const uint8_t* data = nullptr;
  const void* scales = nullptr;  // f32 for kFp8Block / kFp8Channel, raw codes for the MX and NV
                                 // formats
  float global_scale = 1.0f;     // kNvfp4: weight_scale_2
  int block_rows = 128;          // kFp8Block tile
  int block_cols = 128;
  // Bytes from one row of `data` to the next; 0 = dense (weight_row_bytes). Read through
  // weight_data_stride().
  int64_t data_stride = 0;
  // Bytes from one row of `scales` to the next (one tile row for kFp8Block); 0 = dense. Unused for
  // kFp8Channel (one scale per row). Read through weight_scale_stride().
  int64_t scale_stride = 0;
};

// "f32", "bf16", "fp8-block", "fp8-channel", "mxfp4", "nvfp4", "mxfp8".
std::string_view weight_format_name(WeightFormat format);
// True for the formats that carry scales (everything but f32 and bf16).
bool is_quantized_format(WeightFormat format);
// Bytes of `data` per weight row (scales not counted): the row's own bytes, not its stride.
int64_t weight_row_bytes(const WeightView& w);
// Bytes between consecutive rows of `data`: data_stride, or weight_row_bytes when dense.
int64_t weight_data_stride(const WeightView& w);
// Bytes between consecutive rows of `scales` (tile rows for kFp8Block; 4 for kFp8Channel; 0 for
// the unscaled formats): scale_stride, or the dense width.
int64_t weight_scale_stride(const WeightView& w);

// Bytes of the weight's codes plus its scales (what reading the whole view reads).
uint64_t weight_view_bytes(const WeightView& w);

// Rows [begin, begin + count) of `w`, the same bytes. For kFp8Block `begin` must be a multiple of
// the tile height. Error naming `what` otherwise or when out of range.
WeightView slice_rows(const WeightView& w, int64_t begin, int64_t count,
                      std::string_view what = "weight");
// Columns [begin, begin + count) of `w`, the same bytes; rows keep their stride. Both ends must lie
// on the format's block boundary (32 for MXFP4 and MXFP8, 16 for NVFP4, block_cols for kFp8Block;
// the matrix's last column counts as one), and on an even column for the packed FP4 formats. Error
// naming `what` otherwise.
WeightView slice_cols(const WeightView& w, int64_t begin, int64_t count,
                      std::string_view what = "weight");

}  // namespace minimax
