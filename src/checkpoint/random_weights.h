// Random stored tensors of any size, generated in place in their stored layout: the bytes of a
// real-width test checkpoint (`make-tiny --hf-config`), where a BF16 model quantized afterwards
// would need the whole model twice on disk and hours of scalar encoding.
//
// Every byte is a pure function of (seed, tensor name, offset), so any range can be filled on any
// thread in any order and a tensor never has to be in memory whole. Quantized weights are drawn
// as codes and scales directly (not encoded from floats): the codes follow a normal distribution
// on the format's grid and the scales give the weight the spread init_of() gives its role, so
// the decoded weight is a plausible N(mean, std) matrix with tile-to-tile scale variation.
#pragma once

#include <cstdint>
#include <span>

#include "checkpoint/model_config.h"
#include "checkpoint/quant_config.h"
#include "checkpoint/tensor_table.h"

namespace minimax {

class RandomTensorSource {
 public:
  // `stored` is one of stored_tensors(spec, quant) (the weight, or one of its scale tensors).
  // Error naming the tensor for a stored tensor this generator has no rule for.
  RandomTensorSource(const TensorSpec& spec, const StoredTensor& stored, QuantScheme scheme,
                     const ModelConfig& config, uint64_t seed);

  // Writes bytes [offset, offset + out.size()) of the tensor. `offset` and the size must be
  // multiples of the element size.
  void fill(uint64_t offset, std::span<uint8_t> out) const;
  int element_bytes() const { return element_bytes_; }

 private:
  enum class Kind { kBF16, kF32, kByteTable };
  // 8 random bytes per 64-bit word: word w of this tensor's stream.
  uint64_t word(uint64_t w) const;

  Kind kind_ = Kind::kBF16;
  int element_bytes_ = 2;
  uint64_t key_ = 0;
  // Element value by random byte: bf16 codes, f32 values or raw stored bytes (FP8 codes, packed
  // e2m1 pairs, e8m0 / e4m3 scale codes).
  uint16_t bf16_[256] = {};
  float f32_[256] = {};
  uint8_t bytes_[256] = {};
};

// The mean and standard deviation of a tensor's values by role (embeddings N(0, 1), norms near
// their identity, router bias N(0, 0.1), linear weights N(0, 1/in)): shared by the tiny
// checkpoints and the real-width ones.
std::pair<double, double> initial_distribution(const TensorSpec& spec, const ModelConfig& config);

}  // namespace minimax
