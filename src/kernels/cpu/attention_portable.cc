// The CPU attention kernels compiled without SIMD (any x86-64 CPU) (see attention_kernels-inl.h).
#define MINIMAX_SIMD_LEVEL 0
#define MINIMAX_ATTENTION_TABLE attention_kernels_portable
#include "kernels/cpu/attention_kernels-inl.h"
