#include "model/weight_shard.h"

#include <cstring>
#include <numeric>

#include "base/error.h"

namespace minimax {

WeightView WeightSharder::retiled(const WeightView& w, int64_t r0, int64_t nr, int64_t c0,
                                  int64_t nc) {
  // gcd(tile, 0) is the tile itself: an aligned start keeps the stored grid on that axis.
  const int64_t br = std::gcd<int64_t>(w.block_rows, r0), bc = std::gcd<int64_t>(w.block_cols, c0);
  const int64_t srows = (nr + br - 1) / br, scols = (nc + bc - 1) / bc;
  const int64_t stored_stride = weight_scale_stride(w) / 4;  // floats per stored tile row
  owned_->emplace_back(static_cast<size_t>(srows * scols) * sizeof(float));
  float* scales = reinterpret_cast<float*>(owned_->back().data());
  const float* stored = static_cast<const float*>(w.scales);
  for (int64_t i = 0; i < srows; ++i)
    for (int64_t j = 0; j < scols; ++j)
      scales[i * scols + j] =
          stored[((r0 + i * br) / w.block_rows) * stored_stride + (c0 + j * bc) / w.block_cols];
  WeightView s = w;
  s.data_stride = weight_data_stride(w);
  s.data = w.data + r0 * s.data_stride + c0;  // one byte per e4m3 code
  s.rows = nr;
  s.cols = nc;
  s.block_rows = static_cast<int>(br);
  s.block_cols = static_cast<int>(bc);
  s.scales = scales;
  s.scale_stride = scols * static_cast<int64_t>(sizeof(float));
  return s;
}

WeightView WeightSharder::rows(const WeightView& w, int64_t begin, int64_t count,
                               std::string_view what) {
  if (begin == 0 && count == w.rows) return w;
  if (w.format == WeightFormat::kFp8Block && begin % w.block_rows != 0) {
    slice_rows(WeightView{.rows = w.rows, .cols = w.cols}, begin, count, what);  // range check
    return retiled(w, begin, count, 0, w.cols);
  }
  return slice_rows(w, begin, count, what);
}

WeightView WeightSharder::cols(const WeightView& w, int64_t begin, int64_t count,
                               std::string_view what) {
  if (begin == 0 && count == w.cols) return w;
  if (w.format == WeightFormat::kFp8Block &&
      (begin % w.block_cols != 0 ||
       ((begin + count) % w.block_cols != 0 && begin + count != w.cols))) {
    slice_cols(WeightView{.rows = w.rows, .cols = w.cols}, begin, count, what);  // range check
    // Re-tiled from row 0 of the stored view (row shares of a column share are not asked for).
    return dense_rows(retiled(w, 0, w.rows, begin, count));
  }
  return dense_rows(slice_cols(w, begin, count, what));
}

WeightView WeightSharder::dense_rows(WeightView s) {
  const int64_t row_bytes = weight_row_bytes(s), stride = weight_data_stride(s);
  if (stride == row_bytes || s.rows == 0) return s;
  owned_->emplace_back(static_cast<size_t>(s.rows * row_bytes));
  uint8_t* data = owned_->back().data();
  for (int64_t r = 0; r < s.rows; ++r)
    std::memcpy(data + r * row_bytes, s.data + r * stride, static_cast<size_t>(row_bytes));
  s.data = data;
  s.data_stride = 0;
  return s;
}

WeightView WeightSharder::row_share(const WeightView& w, int part, int parts,
                                    std::string_view what) {
  if (w.rows % parts != 0) fail("{}: {} rows do not divide among {} ranks", what, w.rows, parts);
  const int64_t n = w.rows / parts;
  return rows(w, part * n, n, what);
}

WeightView WeightSharder::col_share(const WeightView& w, int part, int parts,
                                    std::string_view what) {
  if (w.cols % parts != 0) fail("{}: {} columns do not divide among {} ranks", what, w.cols, parts);
  const int64_t n = w.cols / parts;
  return cols(w, part * n, n, what);
}

}  // namespace minimax
