// Checks that a weight view is an exact part of another (model/weight_shard.h, rank shares).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/reference/weight_rows.h"

namespace minimax::testing_support {

// Row `r` of `w`, decoded exactly.
inline std::vector<double> row_of(const WeightView& w, int64_t r) {
  std::vector<double> out(w.cols);
  reference::decode_row(w, r, out.data());
  return out;
}

// Rows [r0, r0 + share.rows) × columns [c0, c0 + share.cols) of `whole` equal `share`.
inline void expect_part(const WeightView& whole, const WeightView& share, int64_t r0, int64_t c0) {
  for (int64_t r = 0; r < share.rows; ++r) {
    const std::vector<double> full = row_of(whole, r0 + r);
    ASSERT_EQ(row_of(share, r),
              std::vector<double>(full.begin() + c0, full.begin() + c0 + share.cols))
        << "row " << r;
  }
}

}  // namespace minimax::testing_support
