// Turns the stored tensors of one logical weight into a WeightView (internal to the loader).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/quant_config.h"
#include "checkpoint/tensor_table.h"
#include "formats/tensor_store.h"
#include "kernels/weight_view.h"

namespace minimax {

class WeightLoader {
 public:
  WeightLoader(const TensorStore& store, const QuantConfig& quant,
               std::vector<std::vector<uint8_t>>* owned)
      : store_(store), quant_(quant), owned_(owned) {}

  // A Linear weight in whatever layout `quant` stores it (stored_tensors() of the table entry):
  // codes and FP4 scales in place, FP8 scales as f32.
  WeightView linear(const TensorSpec& spec);
  // An unquantized matrix (embedding, router): BF16 or F32 in place, F16 converted to F32.
  WeightView matrix(const TensorSpec& spec);
  // A small vector (norm weight, router bias) as f32.
  std::vector<float> vector(const TensorSpec& spec);
  // An owned bf16 copy of any view (the dequant MoE path).
  WeightView decoded_bf16(const WeightView& w);

 private:
  TensorRef expect(const std::string& name, std::initializer_list<DType> dtypes,
                   const std::vector<int64_t>& shape);
  // An f32 array of the tensor's values: in place when stored F32 and 4-byte aligned, else a
  // converted owned copy.
  const float* f32_values(const TensorRef& ref);
  uint8_t* own(size_t bytes);

  const TensorStore& store_;
  const QuantConfig& quant_;
  std::vector<std::vector<uint8_t>>* owned_;
};

}  // namespace minimax
