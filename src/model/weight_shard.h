// A rank's share of a loaded weight, exact in every stored layout (internal to the loader). A row
// share is a view of the same mapped bytes. A column share gets its rows copied next to each other
// (dense_rows). A block-FP8 cut that does not fall on the 128 × 128 tile grid (real M2 under TP_TP
// at 8 ranks cuts each expert's 1536 width into 192-wide shares) also gets its own scale array on a
// finer grid, each finer tile carrying the scale of the tile it lies in, so every weight keeps its
// exact value.
// Cuts through an MXFP4 (32) or NVFP4 (16) scale block cannot be made exact and are refused with
// the tensor's name and the sizes.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kernels/weight_view.h"

namespace minimax {

class WeightSharder {
 public:
  explicit WeightSharder(std::vector<std::vector<uint8_t>>* owned) : owned_(owned) {}

  // Rows [begin, begin + count) / columns [begin, begin + count) of `w`. Error naming `what`.
  WeightView rows(const WeightView& w, int64_t begin, int64_t count, std::string_view what);
  WeightView cols(const WeightView& w, int64_t begin, int64_t count, std::string_view what);
  // Share `part` of `parts` equal contiguous shares of the rows / columns (Error naming `what`
  // when they do not divide).
  WeightView row_share(const WeightView& w, int part, int parts, std::string_view what);
  WeightView col_share(const WeightView& w, int part, int parts, std::string_view what);

 private:
  // The block-FP8 sub-matrix [r0, r0 + nr) × [c0, c0 + nc) on the finest tile grid both cuts and
  // the stored tiles agree on, with its own scales.
  WeightView retiled(const WeightView& w, int64_t r0, int64_t nr, int64_t c0, int64_t nc);
  // `s` with its rows copied next to each other when they are pieces of longer stored rows (a
  // column share): read in place, a rank would stream every other piece of each row, and the
  // hardware prefetchers run on into the pieces the other ranks read. Scales stay views.
  WeightView dense_rows(WeightView s);

  std::vector<std::vector<uint8_t>>* owned_;
};

}  // namespace minimax
