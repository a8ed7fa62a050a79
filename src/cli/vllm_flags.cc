#include "cli/vllm_flags.h"

namespace minimax::cli {

void add_vllm_flags(CLI::App* cmd, VllmFlags& flags, CLI::Option* no_prefix_caching) {
  cmd->add_flag("--trust-remote-code", flags.trust_remote_code,
                "Accepted for vLLM's command lines; changes nothing (no checkpoint code is run)");
  cmd->add_flag("--enable-auto-tool-choice", flags.enable_auto_tool_choice,
                "Accepted for vLLM's command lines; changes nothing (tool calls are parsed "
                "whenever --tool-call-parser is not none)");
  cmd->add_flag("--enable-prefix-caching", flags.enable_prefix_caching,
                "Reuse KV blocks of identical prompt prefixes (the default)")
      ->excludes(no_prefix_caching);
  // vLLM's "auto" is the checkpoint's own type; bfloat16 is what the kernels compute non-quantized
  // weights in. Other types (float16, float32) would silently mean something else here.
  cmd->add_option("--dtype", flags.dtype,
                  "Accepted for vLLM's command lines: auto or bfloat16 (weights are used as the "
                  "checkpoint stores them)")
      ->check(CLI::IsMember({"auto", "bfloat16"}));
}

std::vector<std::string> vllm_flag_notes(const VllmFlags& flags) {
  std::vector<std::string> notes;
  if (flags.trust_remote_code)
    notes.push_back("--trust-remote-code changes nothing here: no checkpoint code is ever run");
  if (flags.enable_auto_tool_choice)
    notes.push_back(
        "--enable-auto-tool-choice changes nothing here: tool calls are parsed whenever "
        "--tool-call-parser is not none");
  return notes;
}

}  // namespace minimax::cli
