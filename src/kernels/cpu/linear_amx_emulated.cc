// linear_amx.cc compiled against the tile emulator (amx_emulation-inl.h): the same kernel code, its
// functions in namespace amx_emulated, for checking it on CPUs without AMX (cpu_features.h
// set_amx_emulation, MINIMAX_CPU_AMX=emulate).
#define MINIMAX_AMX_EMULATED 1
#include "kernels/cpu/linear_amx.cc"
