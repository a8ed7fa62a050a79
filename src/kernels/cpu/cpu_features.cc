// Run-time ISA detection with __builtin_cpu_supports, and the MINIMAX_CPU_ISA cap.
#include "kernels/cpu/cpu_features.h"

#include <cstdlib>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "base/error.h"

namespace minimax {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// F16C straight from CPUID (leaf 1, ECX bit 29): clang does not know "f16c" as a
// __builtin_cpu_supports name. Only consulted together with AVX2, whose check already covers the
// OS saving the ymm state.
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (ecx & (1u << 29)) != 0;
}
#endif

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = [] {
    CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    // BMI1/2 too: the kernels are compiled with them (bzhi; the compiler may pick shlx, andn).
    f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c() &&
             __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
    f.avx512 = f.avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vbmi");
    f.avx512_bf16 = f.avx512 && __builtin_cpu_supports("avx512bf16");
#endif
    return f;
  }();
  return features;
}

bool cpu_supports(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kScalar:
      return true;
    case CpuIsa::kAvx2:
      return cpu_features().avx2;
    case CpuIsa::kAvx512:
      return cpu_features().avx512;
  }
  return false;
}

std::string_view cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kScalar:
      return "scalar";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

CpuIsa parse_cpu_isa(std::string_view text, std::string_view what) {
  if (text == "scalar") return CpuIsa::kScalar;
  if (text == "avx2") return CpuIsa::kAvx2;
  if (text == "avx512") return CpuIsa::kAvx512;
  fail("{}: unknown CPU instruction set '{}' (expected scalar, avx2 or avx512)", what, text);
}

CpuIsa default_cpu_isa() {
  static const CpuIsa isa = [] {
    CpuIsa best = CpuIsa::kScalar;
    if (cpu_supports(CpuIsa::kAvx2)) best = CpuIsa::kAvx2;
    if (cpu_supports(CpuIsa::kAvx512)) best = CpuIsa::kAvx512;
    const char* env = std::getenv("MINIMAX_CPU_ISA");
    if (env == nullptr || *env == '\0') return best;
    const CpuIsa wanted = parse_cpu_isa(env, "MINIMAX_CPU_ISA");
    if (!cpu_supports(wanted))
      fail("MINIMAX_CPU_ISA: this CPU does not support '{}' (best available: {})", env,
           cpu_isa_name(best));
    return wanted;
  }();
  return isa;
}

}  // namespace minimax
