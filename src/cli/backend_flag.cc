#include "cli/backend_flag.h"

#include <vector>

#include "kernels/backend.h"

namespace minimax::cli {

CLI::Option* add_backend_flag(CLI::App* cmd, std::string& backend) {
  std::vector<std::string> names;
  std::string listed;
  for (const BackendEntry& e : registered_backends()) {
    names.emplace_back(e.name);
    listed += (listed.empty() ? "" : ", ") + std::string(e.name);
  }
  return cmd->add_option("--backend", backend, "Kernels: " + listed)->check(CLI::IsMember(names));
}

}  // namespace minimax::cli
