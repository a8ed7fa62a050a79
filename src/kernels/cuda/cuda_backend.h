// The CUDA backend (built when CMake finds nvcc: MINIMAX_HAVE_CUDA): device memory, weights
// copied to the GPU on first use, and every op of kernels/ops.h as CUDA kernels
// (cuda_kernels.h). docs/cuda.md says what it covers and how it is checked.
#pragma once

#include <memory>

#include "kernels/backend.h"

namespace minimax {

// Error naming the reason when there is no usable GPU (no driver, no device, out of memory).
std::unique_ptr<Backend> create_cuda_backend(const BackendOptions& options);

}  // namespace minimax
