// What several kernel tests share: the ISA levels this CPU runs, normal random inputs, and f32's
// unit roundoff for error bounds.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_features.h"

namespace minimax {

constexpr double kU = 0x1p-24;  // f32 unit roundoff

// The CPU kernel levels this machine can run, scalar first.
inline std::vector<CpuIsa> levels() {
  std::vector<CpuIsa> out;
  for (CpuIsa isa : {CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512})
    if (cpu_supports(isa)) out.push_back(isa);
  return out;
}

// `n` draws from N(0, sd²).
inline std::vector<float> random_floats(size_t n, std::mt19937& rng, float sd = 1.0f) {
  std::normal_distribution<float> dist(0.0f, sd);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Positions from, from + 1, ..., from + n - 1.
inline std::vector<int32_t> positions_from(int32_t from, int32_t n) {
  std::vector<int32_t> v(n);
  for (int32_t i = 0; i < n; ++i) v[i] = from + i;
  return v;
}

}  // namespace minimax
