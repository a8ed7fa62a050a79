#include "cli/backend_flag.h"

#include "base/error.h"

namespace minimax::cli {

void add_backend_flags(CLI::App* cmd, std::string& backend, bool& cpu_moe) {
  std::string listed;
  for (const BackendEntry& e : registered_backends())
    listed += (listed.empty() ? "" : ", ") + std::string(e.name);
  // Checked by resolve_backend (parse_backend_kind), which also says when a known backend is
  // not built into this binary.
  cmd->add_option("--backend", backend, "Kernels: " + listed);
  cmd->add_flag("--cpu-moe", cpu_moe,
                "With --backend cuda: the routed experts run on the CPU (host memory, any "
                "layout), everything else on the GPU");
}

BackendKind resolve_backend(const std::string& backend, bool cpu_moe) {
  const BackendKind kind = parse_backend_kind(backend, "--backend");
  if (cpu_moe && kind != BackendKind::kCuda)
    fail(
        "--cpu-moe: only with --backend cuda (with --backend {} every op, the experts included, "
        "already runs on the CPU)",
        backend);
  return kind;
}

}  // namespace minimax::cli
