// WeightView facts shared by the loader and every backend.
#include "kernels/weight_view.h"

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
      return w.cols;
    case WeightFormat::kMxfp4:
    case WeightFormat::kNvfp4:
      return w.cols / 2;
  }
  return 0;
}

}  // namespace minimax
