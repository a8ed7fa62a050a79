// The one registry of architectures: the `architectures[0]` string of config.json → the model
// that runs it. M2 and M3 share one implementation (model/model.h); the entry says which
// architecture family the string is, and the loader refuses a config whose parsed family differs.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "model/model.h"

namespace minimax {

using ModelFactory = std::unique_ptr<Model> (*)(ModelConfig config, QuantConfig quant,
                                                std::unique_ptr<TensorStore> store,
                                                const ModelOptions& options,
                                                const Communicator* comm);

struct ArchitectureEntry {
  std::string_view architecture;  // e.g. "MiniMaxM2ForCausalLM"
  Arch arch;
  std::string_view description;
  ModelFactory create;
};

std::span<const ArchitectureEntry> registered_architectures();
// Error naming `source`, the string and the supported ones when it is not registered.
const ArchitectureEntry& find_architecture(std::string_view architecture,
                                           const std::string& source);

}  // namespace minimax
