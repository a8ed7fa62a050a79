// The backend configurations the op table runs on: every registered backend but the reference
// (which defines the answers), the CPU one at every ISA level this machine runs and, where the
// level has bf16 products, with each activation precision whose kernels differ.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernels/backend.h"

namespace minimax {

struct BackendConfig {
  std::string name;  // "cpu/avx512/bf16x2", "cpu/avx2/f32", ...
  BackendKind kind;
  BackendOptions options;
  bool reduced_activations = false;  // products of bf16-rounded activations: the looser tolerance
};

std::vector<BackendConfig> backend_configs();

// The configurations whose name starts with `prefix` ("" = all): what `--backend` selects.
std::vector<BackendConfig> backend_configs_matching(std::string_view prefix);

}  // namespace minimax
