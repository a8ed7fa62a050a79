// Run-time ISA detection with __builtin_cpu_supports, and the MINIMAX_CPU_ISA cap.
#include "kernels/cpu/cpu_features.h"

#include <atomic>
#include <cstdlib>
#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
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

// AMX-TILE and AMX-BF16 (CPUID leaf 7: EDX bits 24 and 22), the OS saving the tile config and data
// (XCR0 bits 17 and 18), and Linux granting this process the tile data state: without that
// permission the first tile instruction faults (SIGILL).
bool cpu_has_amx_bf16() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  if ((edx & (1u << 24)) == 0 || (edx & (1u << 22)) == 0) return false;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0 || (ecx & (1u << 27)) == 0)
    return false;  // OSXSAVE
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & (3u << 17)) != (3u << 17)) return false;
#if defined(__linux__) && defined(__x86_64__)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
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
    f.amx_bf16 = f.avx512_bf16 && cpu_has_amx_bf16();
#endif
    return f;
  }();
  return features;
}

namespace {
std::atomic<bool> amx_emulated{false};
}  // namespace

void set_amx_emulation(bool on) { amx_emulated.store(on, std::memory_order_relaxed); }

bool amx_emulation() { return amx_emulated.load(std::memory_order_relaxed); }

bool amx_usable() { return amx_emulation() ? cpu_features().avx512_bf16 : cpu_features().amx_bf16; }

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
    return best;
  }();
  return isa;
}

}  // namespace minimax
