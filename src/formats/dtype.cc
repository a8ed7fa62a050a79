// DType names and sizes.
#include "formats/dtype.h"

#include <array>

namespace minimax {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  int bits;
};

constexpr std::array<DTypeInfo, 22> kInfos = {{
    {DType::kBOOL, "BOOL", 8},
    {DType::kF4, "F4", 4},
    {DType::kF6_E2M3, "F6_E2M3", 6},
    {DType::kF6_E3M2, "F6_E3M2", 6},
    {DType::kU8, "U8", 8},
    {DType::kI8, "I8", 8},
    {DType::kF8_E5M2, "F8_E5M2", 8},
    {DType::kF8_E4M3, "F8_E4M3", 8},
    {DType::kF8_E8M0, "F8_E8M0", 8},
    {DType::kF8_E4M3FNUZ, "F8_E4M3FNUZ", 8},
    {DType::kF8_E5M2FNUZ, "F8_E5M2FNUZ", 8},
    {DType::kI16, "I16", 16},
    {DType::kU16, "U16", 16},
    {DType::kF16, "F16", 16},
    {DType::kBF16, "BF16", 16},
    {DType::kI32, "I32", 32},
    {DType::kU32, "U32", 32},
    {DType::kF32, "F32", 32},
    {DType::kC64, "C64", 64},
    {DType::kF64, "F64", 64},
    {DType::kI64, "I64", 64},
    {DType::kU64, "U64", 64},
}};

}  // namespace

std::string_view dtype_name(DType dtype) { return kInfos[static_cast<size_t>(dtype)].name; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& info : kInfos) {
    if (info.name == name) return info.dtype;
  }
  return std::nullopt;
}

int dtype_bits(DType dtype) { return kInfos[static_cast<size_t>(dtype)].bits; }

int dtype_alignment(DType dtype) { return (dtype_bits(dtype) + 7) / 8; }

}  // namespace minimax
