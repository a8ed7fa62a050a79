// The CPU attention kernels compiled for AVX2 (see attention_kernels-inl.h).
#define MINIMAX_SIMD_LEVEL 1
#define MINIMAX_ATTENTION_TABLE attention_kernels_avx2
#include "kernels/cpu/attention_kernels-inl.h"
