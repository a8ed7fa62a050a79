// --speculative-config, shared by serve, generate, chat and bench (and their recipes): vLLM's JSON
// for the draft-free methods (runtime/spec/speculative_config.h). Speculation is lossless only when
// a position's logits do not depend on how many tokens its forward pass ran with, so a command
// given the flag runs with batch-invariant kernels (--batch-invariant) whether or not that flag
// was given.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "runtime/spec/speculative_config.h"

namespace minimax::cli {

void add_speculative_config_flag(CLI::App* cmd, std::string& value);
// nullopt when the flag was not given; Error naming the flag and the key otherwise.
std::optional<SpeculativeConfig> speculative_config_of(const std::string& value);
// The summary line commands print: "ngram, up to 16 draft tokens (batch-invariant kernels)".
std::string describe_speculation(const SpeculativeConfig& config);
// Host memory speculation takes beside the model and its KV pool: an EAGLE-3 head's weights (its
// safetensors files) and, with prefix caching, the server's tap store; 0 for the draft-free
// methods.
int64_t draft_memory_bytes(const SpeculativeConfig& config, bool prefix_caching);

}  // namespace minimax::cli
