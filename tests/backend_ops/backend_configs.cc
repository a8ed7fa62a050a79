#include "backend_configs.h"

#include <cstdio>

#include "base/error.h"

namespace minimax {

namespace {

// The CPU backend: f32 activations at every level; the bf16 and split-bf16 products where the
// level has them (AVX-512 with AVX512_BF16), with and without AMX tiles where the CPU has those.
void add_cpu_configs(std::vector<BackendConfig>& out) {
  for (CpuIsa isa : {CpuIsa::kScalar, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (!cpu_supports(isa)) continue;
    std::vector<ActivationPrecision> precisions = {ActivationPrecision::kF32};
    if (isa == CpuIsa::kAvx512 && cpu_features().avx512_bf16)
      precisions.insert(precisions.end(),
                        {ActivationPrecision::kBF16, ActivationPrecision::kBF16x2});
    for (ActivationPrecision p : precisions) {
      for (bool amx : {false, true}) {
        if (amx && (!cpu_features().amx_bf16 || p == ActivationPrecision::kF32)) continue;
        BackendConfig c;
        c.kind = BackendKind::kCpu;
        c.options.cpu.isa = isa;
        c.options.cpu.amx = amx;
        c.options.cpu.activations = p;
        c.reduced_activations = p != ActivationPrecision::kF32;
        c.name = "cpu/" + std::string(cpu_isa_name(isa)) + "/" + activation_precision_name(p) +
                 (amx ? "/amx" : "");
        out.push_back(std::move(c));
      }
    }
  }
}

// The CUDA backend (builds with nvcc), where this machine has a GPU it can use: f32 activations.
void add_cuda_configs(std::vector<BackendConfig>& out) {
  try {
    create_backend(BackendKind::kCuda);
  } catch (const Error& e) {
    static const bool said = [&] {
      std::fprintf(stderr, "backend_ops: the cuda configuration is skipped: %s\n", e.what());
      return true;
    }();
    (void)said;
    return;
  }
  BackendConfig c;
  c.kind = BackendKind::kCuda;
  c.name = "cuda";
  out.push_back(std::move(c));
}

}  // namespace

std::vector<BackendConfig> backend_configs() {
  std::vector<BackendConfig> out;
  for (const BackendEntry& entry : registered_backends()) {
    switch (entry.kind) {
      case BackendKind::kReference:
        break;  // the answers
      case BackendKind::kCpu:
        add_cpu_configs(out);
        break;
      case BackendKind::kCuda:
        add_cuda_configs(out);
        break;
    }
  }
  return out;
}

std::vector<BackendConfig> backend_configs_matching(std::string_view prefix) {
  std::vector<BackendConfig> out;
  for (BackendConfig& c : backend_configs())
    if (std::string_view(c.name).substr(0, prefix.size()) == prefix) out.push_back(std::move(c));
  return out;
}

}  // namespace minimax
