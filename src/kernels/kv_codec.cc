// KV cache element codecs (kv_codec.h). The fp8 encoder is a bit-level f32 → e4m3fn conversion
// (the store runs over every key and value of a prefill); tests check it against
// formats/float_formats.h f64_to_fp8, the exact reference codec, on every code boundary.
#include "kernels/kv_codec.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include "formats/float_formats.h"

namespace minimax {

uint8_t encode_fp8_kv(float x) {
  const float scaled = x / kFp8KvScale;
  const uint32_t bits = std::bit_cast<uint32_t>(scaled);
  const auto sign = static_cast<uint8_t>((bits >> 24) & 0x80);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return 0x7F;          // NaN: e4m3fn's NaN code
  if (magnitude >= 0x43E00000u) return sign | 0x7E;  // ≥ 448 (inf too): saturate at ±448
  if (magnitude < 0x3C800000u) {                     // below 2^-6: subnormal codes m·2^-9
    const float units = std::bit_cast<float>(magnitude) * 512.0f;  // exact
    return sign | static_cast<uint8_t>(std::nearbyint(units));     // ties to even; 8 = 2^-6
  }
  // Normal: keep 3 of the 23 mantissa bits, ties to even; a carry into the exponent is correct.
  const uint32_t rounded = magnitude + 0x7FFFFu + ((magnitude >> 20) & 1u);
  const uint32_t exponent = (rounded >> 23) - 127 + 7;
  return sign | static_cast<uint8_t>((exponent << 3) | ((rounded >> 20) & 7u));
}

const float* fp8_kv_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int c = 0; c < 256; ++c)
      t[c] =
          static_cast<float>(fp8_to_f64(static_cast<uint8_t>(c), Fp8Format::kE4M3FN)) * kFp8KvScale;
    return t;
  }();
  return table.data();
}

void encode_kv_row(const float* x, int64_t n, KvDtype dtype, void* out) {
  switch (dtype) {
    case KvDtype::kF32:
      std::memcpy(out, x, static_cast<size_t>(n) * sizeof(float));
      return;
    case KvDtype::kBF16: {
      auto* o = static_cast<uint16_t*>(out);
      for (int64_t i = 0; i < n; ++i) o[i] = f32_to_bf16(x[i]);
      return;
    }
    case KvDtype::kFp8E4m3: {
      auto* o = static_cast<uint8_t*>(out);
      for (int64_t i = 0; i < n; ++i) o[i] = encode_fp8_kv(x[i]);
      return;
    }
  }
}

void decode_kv_row(const void* row, int64_t n, KvDtype dtype, float* out) {
  switch (dtype) {
    case KvDtype::kF32:
      std::memcpy(out, row, static_cast<size_t>(n) * sizeof(float));
      return;
    case KvDtype::kBF16: {
      const auto* r = static_cast<const uint16_t*>(row);
      for (int64_t i = 0; i < n; ++i) out[i] = std::bit_cast<float>(uint32_t{r[i]} << 16);
      return;
    }
    case KvDtype::kFp8E4m3: {
      const auto* r = static_cast<const uint8_t*>(row);
      const float* table = fp8_kv_table();
      for (int64_t i = 0; i < n; ++i) out[i] = table[r[i]];
      return;
    }
  }
}

}  // namespace minimax
