// Reference residual add, copy, row gather and KV store: the data movement the model leaves to its
// backend.
#include <algorithm>

#include "base/error.h"
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

const float* f32_kv(const void* p, KvDtype dtype, std::string_view op) {
  if (dtype != KvDtype::kF32)
    fail("{}: KV cache type {} is not implemented by the host kernels (f32 only)", op,
         kv_dtype_name(dtype));
  return static_cast<const float*>(p);
}

void store_kv(const KvStoreArgs& a) {
  float* storage = const_cast<float*>(f32_kv(a.storage, a.dtype, "store_kv"));
  for (int64_t t = 0; t < a.T; ++t) {
    const int64_t slot = a.positions[t];
    const int64_t row =
        a.page_table != nullptr
            ? int64_t(a.page_table[slot / a.page_size]) * a.page_size + slot % a.page_size
            : slot;
    std::copy_n(a.rows + t * a.width, a.width, storage + row * a.width);
  }
}

}  // namespace minimax::reference
