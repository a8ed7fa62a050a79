// The f32-activation batch GEMM at the AVX2 level (linear_gemm_f32-inl.h).
#define MINIMAX_GEMM_F32_LEVEL 1
#include "kernels/cpu/linear_gemm_f32-inl.h"
