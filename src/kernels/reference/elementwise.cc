// Reference residual add, copy, row gather and KV store: the data movement the model leaves to its
// backend.
#include <algorithm>

#include "base/error.h"
#include "kernels/kv_codec.h"
#include "kernels/reference/reference_ops.h"

namespace minimax::reference {

void add(float* y, const float* x, int64_t n, ThreadPool* pool) {
  for_range(pool, n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] += x[i];
  });
}

void copy(float* y, const float* x, int64_t n) { std::copy_n(x, n, y); }

void gather_rows(const float* x, int64_t width, const int32_t* rows, int64_t count, float* out) {
  for (int64_t i = 0; i < count; ++i) std::copy_n(x + rows[i] * width, width, out + i * width);
}

void store_kv(const KvStoreArgs& a) {
  for (int64_t t = 0; t < a.T; ++t) {
    const int64_t row = cache_row(a.page_table, a.page_size, a.positions[t]);
    encode_kv_row(a.rows + t * a.width, a.width, a.dtype,
                  const_cast<void*>(kv_element(a.storage, a.dtype, row * a.width)));
  }
}

}  // namespace minimax::reference
