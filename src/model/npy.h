// NumPy .npy (format 1.0) for the logits the engine writes for parity checks: little-endian
// float32, C order. Written to a temporary name and renamed when complete.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace minimax {

// The whole file's bytes: magic, version 1.0, the header dict padded to a multiple of 64, data.
std::string npy_f32_bytes(std::span<const float> values, const std::vector<int64_t>& shape);
// Error naming `path` when the element count does not match the shape or the write fails.
void write_npy_f32(const std::string& path, std::span<const float> values,
                   const std::vector<int64_t>& shape);

}  // namespace minimax
