// Run-time choice of the x86 instruction set for the CPU kernels: what this CPU (and its OS) can
// run, and the level the kernels use. The binary is built for plain x86-64; the SIMD code is
// compiled per function with target attributes and only called when the CPU reports it.
#pragma once

#include <string_view>

namespace minimax {

// Ordered: each level's kernels need everything the level below needs.
enum class CpuIsa : int {
  kScalar = 0,  // portable C++ (any CPU, and the fallback for unusual shapes)
  kAvx2 = 1,    // AVX2, FMA, F16C, BMI1, BMI2 (Haswell, Zen 1 and later)
  kAvx512 = 2,  // AVX-512 F, BW, VL, DQ, VBMI (Ice Lake, Sapphire Rapids, Zen 4 and later)
};

struct CpuFeatures {
  bool avx2 = false;         // AVX2, FMA, F16C, BMI1 and BMI2 together
  bool avx512 = false;       // F, BW, VL, DQ and VBMI together (what the kAvx512 kernels use)
  bool avx512_bf16 = false;  // AVX512_BF16 (vdpbf16ps), on top of `avx512`
  // AMX-TILE and AMX-BF16 (Intel Sapphire Rapids and later), on top of `avx512_bf16`, with the OS
  // saving the tile state and this process permitted to use it (Linux arch_prctl, requested once
  // when the features are first read).
  bool amx_bf16 = false;
};

// What the running CPU supports (read once; __builtin_cpu_supports also checks that the OS saves
// the vector state).
const CpuFeatures& cpu_features();

// The AMX kernels run on the CPU's tiles, or, once this is turned on, on a software model of the
// tile instructions (kernels/cpu/amx_emulation-inl.h), so that their own code is checked against
// the reference on CPUs without AMX: the tests, and MINIMAX_CPU_AMX=emulate. Much slower; never
// chosen by itself. Process-wide; set it before the kernels run, not while they do.
void set_amx_emulation(bool on);
bool amx_emulation();
// Whether the AMX kernels can run: on the tiles (cpu_features().amx_bf16), or emulated on a CPU
// with AVX512_BF16 (the kernels' own vector code needs it).
bool amx_usable();

bool cpu_supports(CpuIsa isa);

// The best level the CPU supports: what the kernels use unless told otherwise
// (kernels/cpu/cpu_config.h CpuKernelConfig::isa; the commands' MINIMAX_CPU_ISA caps it).
CpuIsa default_cpu_isa();

std::string_view cpu_isa_name(CpuIsa isa);  // "scalar", "avx2", "avx512"
// Parses a name above; Error naming `what` otherwise.
CpuIsa parse_cpu_isa(std::string_view text, std::string_view what);

}  // namespace minimax
