// The CPU attention kernels compiled for AVX-512 (see attention_kernels-inl.h).
#define MINIMAX_SIMD_LEVEL 2
#define MINIMAX_ATTENTION_TABLE attention_kernels_avx512
#include "kernels/cpu/attention_kernels-inl.h"
