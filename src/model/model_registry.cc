// Registered architectures.
#include "model/model_registry.h"

#include <array>

#include "base/error.h"

namespace minimax {
namespace {

std::unique_ptr<Model> create_minimax(ModelConfig config, QuantConfig quant,
                                      std::unique_ptr<TensorStore> store,
                                      const ModelOptions& options, const Communicator* comm) {
  return std::make_unique<Model>(std::move(config), std::move(quant), std::move(store), options,
                                 comm);
}

constexpr std::array<ArchitectureEntry, 2> kEntries = {{
    {"MiniMaxM2ForCausalLM", Arch::kM2,
     "MiniMax-M2 / M2.1 / M2.5 / M2.7: cross-head QK norm, SiLU experts", create_minimax},
    {"MiniMaxM3SparseForConditionalGeneration", Arch::kM3,
     "MiniMax-M3 text backbone: Gemma norms, MSA sparse attention, SwiGLU-OAI, shared expert",
     create_minimax},
}};

}  // namespace

std::span<const ArchitectureEntry> registered_architectures() { return kEntries; }

const ArchitectureEntry& find_architecture(std::string_view architecture,
                                           const std::string& source) {
  std::string known;
  for (const ArchitectureEntry& e : kEntries) {
    if (e.architecture == architecture) return e;
    known += (known.empty() ? "" : ", ") + std::string(e.architecture);
  }
  fail("{}: architecture '{}' has no model (registered: {})", source, architecture, known);
}

}  // namespace minimax
