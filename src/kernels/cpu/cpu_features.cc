// Run-time ISA detection with __builtin_cpu_supports, and the MINIMAX_CPU_ISA cap.
#include "kernels/cpu/cpu_features.h"

#include <cstdlib>

#include "base/error.h"

namespace minimax {

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = [] {
    CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c");
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
