// Reference linear and embedding: decode each weight row once (exactly, in double), then dot it
// with every token's activations in double.
#include <vector>

#include "base/error.h"
#include "kernels/reference/reference_ops.h"
#include "kernels/reference/weight_rows.h"

namespace minimax::reference {

void for_range(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (pool == nullptr || pool->size() == 1 || n == 1) {
    fn(0, n);
    return;
  }
  pool->parallel_for(static_cast<size_t>(n), [&](size_t begin, size_t end, size_t) {
    fn(static_cast<int64_t>(begin), static_cast<int64_t>(end));
  });
}

void linear(const WeightView& w, const float* x, int64_t T, float* y, ThreadPool* pool) {
  check_weight_view(w, "linear");
  if (T <= 0) return;
  for_range(pool, w.rows, [&](int64_t begin, int64_t end) {
    std::vector<double> row(w.cols);
    for (int64_t r = begin; r < end; ++r) {
      decode_row(w, r, row.data());
      for (int64_t t = 0; t < T; ++t) {
        const float* xt = x + t * w.cols;
        double acc = 0;
        for (int64_t c = 0; c < w.cols; ++c) acc += row[c] * static_cast<double>(xt[c]);
        y[t * w.rows + r] = static_cast<float>(acc);
      }
    }
  });
}

void embedding(const WeightView& table, const int32_t* tokens, int64_t T, float* out) {
  check_weight_view(table, "embedding");
  for (int64_t t = 0; t < T; ++t) {
    if (tokens[t] < 0 || tokens[t] >= table.rows)
      fail("embedding: token id {} at position {} is outside the vocabulary [0, {})", tokens[t], t,
           table.rows);
    decode_row(table, tokens[t], out + t * table.cols);
  }
}

}  // namespace minimax::reference
