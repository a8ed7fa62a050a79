// WeightView facts shared by the loader and every backend.
#include "kernels/weight_view.h"

#include "base/error.h"

namespace minimax {

std::string_view weight_format_name(WeightFormat format) {
  switch (format) {
    case WeightFormat::kF32:
      return "f32";
    case WeightFormat::kBF16:
      return "bf16";
    case WeightFormat::kFp8Block:
      return "fp8-block";
    case WeightFormat::kFp8Channel:
      return "fp8-channel";
    case WeightFormat::kMxfp4:
      return "mxfp4";
    case WeightFormat::kNvfp4:
      return "nvfp4";
    case WeightFormat::kMxfp8:
      return "mxfp8";
  }
  return "unknown";
}

bool is_quantized_format(WeightFormat format) {
  return format != WeightFormat::kF32 && format != WeightFormat::kBF16;
}

int64_t weight_row_bytes(const WeightView& w) {
  switch (w.format) {
    case WeightFormat::kF32:
      return w.cols * 4;
    case WeightFormat::kBF16:
      return w.cols * 2;
    case WeightFormat::kFp8Block:
    case WeightFormat::kFp8Channel:
    case WeightFormat::kMxfp8:
      return w.cols;
    case WeightFormat::kMxfp4:
    case WeightFormat::kNvfp4:
      return w.cols / 2;
  }
  return 0;
}

namespace {

// Columns per scale of the block formats; 1 where any column may start a slice.
int64_t column_block(const WeightView& w) {
  switch (w.format) {
    case WeightFormat::kFp8Block:
      return w.block_cols;
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp8:
      return 32;
    case WeightFormat::kNvfp4:
      return 16;
    case WeightFormat::kF32:
    case WeightFormat::kBF16:
    case WeightFormat::kFp8Channel:
      break;
  }
  return 1;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t weight_data_stride(const WeightView& w) {
  return w.data_stride != 0 ? w.data_stride : weight_row_bytes(w);
}

int64_t weight_scale_stride(const WeightView& w) {
  if (w.scale_stride != 0) return w.scale_stride;
  switch (w.format) {
    case WeightFormat::kF32:
    case WeightFormat::kBF16:
      return 0;
    case WeightFormat::kFp8Block:
      return ceil_div(w.cols, w.block_cols) * 4;
    case WeightFormat::kFp8Channel:
      return 4;
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp8:
      return w.cols / 32;
    case WeightFormat::kNvfp4:
      return w.cols / 16;
  }
  return 0;
}

namespace {
uint64_t ceil_div_u(int64_t a, int64_t b) { return static_cast<uint64_t>((a + b - 1) / b); }
}  // namespace

uint64_t weight_view_bytes(const WeightView& w) {
  const auto rows = static_cast<uint64_t>(w.rows);
  const uint64_t codes = rows * static_cast<uint64_t>(weight_row_bytes(w));
  switch (w.format) {
    case WeightFormat::kF32:
    case WeightFormat::kBF16:
      return codes;
    case WeightFormat::kFp8Block:  // f32 per block_rows × block_cols tile
      return codes + 4 * ceil_div_u(w.rows, w.block_rows) * ceil_div_u(w.cols, w.block_cols);
    case WeightFormat::kFp8Channel:  // f32 per row
      return codes + 4 * rows;
    case WeightFormat::kMxfp4:  // e8m0 per 32 weights
    case WeightFormat::kMxfp8:
      return codes + rows * ceil_div_u(w.cols, 32);
    case WeightFormat::kNvfp4:  // e4m3 per 16 weights, one f32 global scale
      return codes + rows * ceil_div_u(w.cols, 16) + 4;
  }
  return 0;
}

WeightView slice_rows(const WeightView& w, int64_t begin, int64_t count, std::string_view what) {
  if (begin < 0 || count <= 0 || begin + count > w.rows)
    fail("{}: rows [{}, {}) are outside the {} weight's {} rows", what, begin, begin + count,
         weight_format_name(w.format), w.rows);
  if (w.format == WeightFormat::kFp8Block && begin % w.block_rows != 0)
    fail("{}: row slice starts at {}, not on a fp8-block tile row (height {})", what, begin,
         w.block_rows);
  WeightView s = w;
  s.data_stride = weight_data_stride(w);
  s.scale_stride = weight_scale_stride(w);
  s.rows = count;
  s.data = w.data + begin * s.data_stride;
  if (w.scales != nullptr) {
    const int64_t scale_row = w.format == WeightFormat::kFp8Block ? begin / w.block_rows : begin;
    s.scales = static_cast<const uint8_t*>(w.scales) + scale_row * s.scale_stride;
  }
  return s;
}

WeightView slice_cols(const WeightView& w, int64_t begin, int64_t count, std::string_view what) {
  if (begin < 0 || count <= 0 || begin + count > w.cols)
    fail("{}: columns [{}, {}) are outside the {} weight's {} columns", what, begin, begin + count,
         weight_format_name(w.format), w.cols);
  const int64_t block = column_block(w), end = begin + count;
  if (begin % block != 0 || (end % block != 0 && end != w.cols))
    fail("{}: columns [{}, {}) do not start and end on the {} block of {} columns", what, begin,
         end, weight_format_name(w.format), block);
  WeightView s = w;
  s.data_stride = weight_data_stride(w);
  s.scale_stride = weight_scale_stride(w);
  s.cols = count;
  s.data = w.data + weight_row_bytes(WeightView{.format = w.format, .cols = begin});
  // FP8 tiles and FP4 blocks: the slice's first scale column is its first block's.
  switch (w.format) {
    case WeightFormat::kF32:
    case WeightFormat::kBF16:
    case WeightFormat::kFp8Channel:
      break;
    case WeightFormat::kFp8Block:
      s.scales = static_cast<const float*>(w.scales) + begin / block;
      break;
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp8:
    case WeightFormat::kNvfp4:
      s.scales = static_cast<const uint8_t*>(w.scales) + begin / block;
      break;
  }
  return s;
}

}  // namespace minimax
