// --speculative-config (cli/speculative_flag.h).
#include "cli/speculative_flag.h"

#include <fmt/format.h>

#include <filesystem>

#include "runtime/spec/tap_store.h"

namespace minimax::cli {

void add_speculative_config_flag(CLI::App* cmd, std::string& value) {
  cmd->add_option("--speculative-config", value,
                  "Speculative decoding, vLLM's JSON: {\"method\": \"ngram\" or \"suffix\", "
                  "\"num_speculative_tokens\": K, ...} or {\"method\": \"eagle3\", \"model\": "
                  "HEAD_DIR, ...}; lossless (turns on --batch-invariant); docs/speculative.md, "
                  "docs/eagle3.md");
}

std::optional<SpeculativeConfig> speculative_config_of(const std::string& value) {
  if (value.empty()) return std::nullopt;
  return parse_speculative_config(value, "--speculative-config");
}

std::string describe_speculation(const SpeculativeConfig& config) {
  return fmt::format("{}, up to {} draft tokens{} (batch-invariant kernels)",
                     draft_method_name(config.method), config.num_speculative_tokens,
                     config.adaptive ? " where they pay" : " every step");
}

int64_t draft_memory_bytes(const SpeculativeConfig& config, bool prefix_caching) {
  if (config.method != DraftMethod::kEagle3) return 0;
  int64_t bytes = prefix_caching ? TapStore::kServerBytes : 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(config.model, error))
    if (entry.path().extension() == ".safetensors")
      bytes += static_cast<int64_t>(entry.file_size(error));
  return bytes;
}

}  // namespace minimax::cli
