// Element types of safetensors files, with their header strings and bit sizes
// (spec/formats.md §7). The enum follows the format's own order (increasing alignment).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace minimax {

enum class DType : uint8_t {
  kBOOL,
  kF4,
  kF6_E2M3,
  kF6_E3M2,
  kU8,
  kI8,
  kF8_E5M2,
  kF8_E4M3,
  kF8_E8M0,
  kF8_E4M3FNUZ,
  kF8_E5M2FNUZ,
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kC64,
  kF64,
  kI64,
  kU64,
};

// The header string, e.g. "BF16".
std::string_view dtype_name(DType dtype);
// Parses a header string; nullopt for an unknown one.
std::optional<DType> parse_dtype(std::string_view name);
// Bits per element: 4 for F4, 6 for F6_*, 8 … 64 otherwise.
int dtype_bits(DType dtype);
// Byte alignment the safetensors writer sorts by (bits rounded up to whole bytes).
int dtype_alignment(DType dtype);

}  // namespace minimax
