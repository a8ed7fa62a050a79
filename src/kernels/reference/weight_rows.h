// Row decoding of a WeightView in any stored format: the one place the reference ops turn stored
// weights into numbers. Decoded values are exact in double for every format (an FP8 or FP4 code
// times its f32 scales needs at most 30 significant bits).
#pragma once

#include <cstdint>

#include "kernels/weight_view.h"

namespace minimax::reference {

// out[c] = W[row, c] for c < w.cols.
void decode_row(const WeightView& w, int64_t row, double* out);
void decode_row(const WeightView& w, int64_t row, float* out);  // rounded once to f32

// Throws Error naming `what` when the view is not usable (null data or scales, a bad shape, an
// FP4 width that is not a multiple of its block).
void check_weight_view(const WeightView& w, const char* what);

}  // namespace minimax::reference
