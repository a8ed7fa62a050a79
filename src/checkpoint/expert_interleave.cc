// Gate/up row interleaving on raw bytes.
#include "checkpoint/expert_interleave.h"

#include <cstring>

#include "base/error.h"

namespace minimax {

void interleave_gate_up_rows(std::span<const uint8_t> gate, std::span<const uint8_t> up,
                             size_t row_bytes, std::span<uint8_t> out) {
  if (row_bytes == 0) fail("interleave_gate_up_rows: row_bytes is 0");
  if (gate.size() % row_bytes != 0)
    fail("interleave_gate_up_rows: gate has {} bytes, not whole rows of {}", gate.size(),
         row_bytes);
  if (up.size() != gate.size())
    fail("interleave_gate_up_rows: up has {} bytes, gate {}", up.size(), gate.size());
  if (out.size() != 2 * gate.size())
    fail("interleave_gate_up_rows: out has {} bytes, needs {}", out.size(), 2 * gate.size());
  const size_t rows = gate.size() / row_bytes;
  for (size_t r = 0; r < rows; ++r) {
    std::memcpy(out.data() + (2 * r) * row_bytes, gate.data() + r * row_bytes, row_bytes);
    std::memcpy(out.data() + (2 * r + 1) * row_bytes, up.data() + r * row_bytes, row_bytes);
  }
}

void interleave_concatenated_gate_up(std::span<const uint8_t> w13, size_t row_bytes,
                                     std::span<uint8_t> out) {
  if (row_bytes == 0 || w13.size() % (2 * row_bytes) != 0)
    fail("interleave_concatenated_gate_up: w13 has {} bytes, not an even number of rows of {}",
         w13.size(), row_bytes);
  const size_t half = w13.size() / 2;
  interleave_gate_up_rows(w13.first(half), w13.subspan(half), row_bytes, out);
}

InterleavedGateUp interleave_expert_gate_up(std::span<const uint8_t> gate_weight,
                                            std::span<const uint8_t> gate_scales,
                                            std::span<const uint8_t> up_weight,
                                            std::span<const uint8_t> up_scales, size_t rows) {
  if (rows == 0 || gate_weight.size() % rows != 0 || gate_scales.size() % rows != 0)
    fail("interleave_expert_gate_up: {} gate weight / {} scale bytes are not {} whole rows",
         gate_weight.size(), gate_scales.size(), rows);
  InterleavedGateUp out;
  out.weight.resize(2 * gate_weight.size());
  out.scales.resize(2 * gate_scales.size());
  interleave_gate_up_rows(gate_weight, up_weight, gate_weight.size() / rows, out.weight);
  interleave_gate_up_rows(gate_scales, up_scales, gate_scales.size() / rows, out.scales);
  return out;
}

}  // namespace minimax
