// Whole-tensor encoders from float rows to each stored quantized layout, and the matching decode
// of a stored tensor to float. Reference quality (scalar); used by the quantizer and by tests.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/quant_config.h"
#include "checkpoint/tensor_table.h"
#include "formats/tensor_store.h"

namespace minimax {

// Element values of a stored unquantized tensor (BF16, F16, F32, F64) as float.
std::vector<float> read_as_float(const TensorRef& ref);

// Encodes `values` (row-major [rows, cols]) as the tensors `stored` describes, in the same order.
// `stored` comes from stored_tensors() for a Linear weight stored in `layout` (not kBf16).
std::vector<std::vector<uint8_t>> encode_weight(std::span<const float> values, int64_t rows,
                                                int64_t cols, LinearLayout layout,
                                                const std::vector<StoredTensor>& stored);

// Decodes the stored tensors of one logical weight back to float [rows, cols]: `weight` is the
// tensor called "<module>.weight", `store` supplies its companion scale tensors.
std::vector<float> decode_weight(const TensorStore& store, const std::string& weight_name,
                                 LinearLayout layout, int64_t rows, int64_t cols);

}  // namespace minimax
