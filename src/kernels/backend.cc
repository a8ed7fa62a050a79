// Backend tables: the reference ops, and the cpu ops completed with the reference ones.
#include "kernels/backend.h"

#include "base/error.h"
#include "kernels/reference/reference_ops.h"

#if __has_include("kernels/cpu/cpu_backend.h")
#include "kernels/cpu/cpu_backend.h"
#define MINIMAX_HAVE_CPU_BACKEND 1
#else
#define MINIMAX_HAVE_CPU_BACKEND 0
#endif

namespace minimax {

std::string_view backend_name(BackendKind kind) {
  switch (kind) {
    case BackendKind::kReference:
      return "reference";
    case BackendKind::kCpu:
      return "cpu";
  }
  return "unknown";
}

BackendKind parse_backend_kind(std::string_view text, std::string_view what) {
  if (text == "reference") return BackendKind::kReference;
  if (text == "cpu") return BackendKind::kCpu;
  fail("{}: unknown kernel backend '{}' (expected reference or cpu)", what, text);
}

const KernelOps& reference_ops() {
  static const KernelOps ops = [] {
    KernelOps t;
    t.name = "reference";
    t.linear = reference::linear;
    t.embedding = reference::embedding;
    t.rms_norm = reference::rms_norm;
    t.rope = reference::rope;
    t.attention = reference::attention;
    t.select_blocks = reference::select_blocks;
    t.route = reference::route;
    t.glu = reference::glu;
    t.quantize_activations = reference::quantize_activations;
    t.moe = reference::moe;
    return t;
  }();
  return ops;
}

KernelOps complete_with_reference(const KernelOps& partial) {
  const KernelOps& ref = reference_ops();
  KernelOps t = partial;
  auto fill = [](auto& slot, auto fallback) {
    if (slot == nullptr) slot = fallback;
  };
  fill(t.linear, ref.linear);
  fill(t.embedding, ref.embedding);
  fill(t.rms_norm, ref.rms_norm);
  fill(t.rope, ref.rope);
  fill(t.attention, ref.attention);
  fill(t.select_blocks, ref.select_blocks);
  fill(t.route, ref.route);
  fill(t.glu, ref.glu);
  fill(t.quantize_activations, ref.quantize_activations);
  fill(t.moe, ref.moe);
  if (t.name == nullptr || *t.name == '\0') t.name = "cpu";
  return t;
}

bool cpu_backend_available() { return MINIMAX_HAVE_CPU_BACKEND != 0; }

const KernelOps& kernel_ops(BackendKind kind) {
  if (kind == BackendKind::kReference) return reference_ops();
  static const KernelOps cpu = [] {
#if MINIMAX_HAVE_CPU_BACKEND
    return complete_with_reference(cpu_kernel_ops());
#else
    KernelOps none;
    none.name = "cpu (reference ops only)";
    return complete_with_reference(none);
#endif
  }();
  return cpu;
}

}  // namespace minimax
