// The element types of the KV cache (KvDtype in ops.h): how an f32 row is stored and read back.
// Every backend stores and reads through these definitions, so a bf16 or fp8 cache holds the same
// codes, and decodes to the same floats, on every backend.
//
// - bf16: round to nearest even (formats/float_formats.h f32_to_bf16); decoding is exact.
// - fp8_e4m3: OCP e4m3fn codes of x / kFp8KvScale, round to nearest even, saturating at ±448
//   (never NaN for a finite input), decoded as code value · kFp8KvScale. One per-tensor scale of
//   1.0 for every layer's K, V and index keys: what vLLM does for an fp8 KV cache when the
//   checkpoint carries no calibrated k_scale / v_scale (docs/kernels.md, "KV cache types").
#pragma once

#include <cstdint>

#include "kernels/ops.h"

namespace minimax {

inline constexpr float kFp8KvScale = 1.0f;

// e4m3fn code of x / kFp8KvScale as described above (NaN → 0x7F).
uint8_t encode_fp8_kv(float x);
// The 256 decoded fp8 KV values, indexed by code.
const float* fp8_kv_table();

// out[0, n) = the stored form of x[0, n); `out` is the row's first element.
void encode_kv_row(const float* x, int64_t n, KvDtype dtype, void* out);
// out[0, n) = the floats of the n stored elements at `row`.
void decode_kv_row(const void* row, int64_t n, KvDtype dtype, float* out);

// The address of element `index` of KV storage `base` of type `dtype`.
inline const void* kv_element(const void* base, KvDtype dtype, int64_t index) {
  return static_cast<const char*>(base) + index * kv_dtype_bytes(dtype);
}

}  // namespace minimax
