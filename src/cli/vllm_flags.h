// vLLM's deployment flags that `serve` accepts so that the commands in MiniMax's own deployment
// guides run unchanged (issue 39). Each either means what it means in vLLM and is already how this
// server works, or means nothing here and is accepted with a one-line note saying so.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace minimax::cli {

struct VllmFlags {
  bool trust_remote_code = false;        // no Python code from a checkpoint is ever run here
  bool enable_auto_tool_choice = false;  // tool calls are parsed whenever a tool parser is on
  bool enable_prefix_caching = false;    // the default; --no-enable-prefix-caching turns it off
  std::string dtype = "auto";            // auto or bfloat16: the weights' own type is used
};

// Adds --trust-remote-code, --enable-auto-tool-choice, --enable-prefix-caching (which excludes
// `no_prefix_caching`, the option --no-enable-prefix-caching) and --dtype auto|bfloat16 (other
// values refused by the parser, naming the flag).
void add_vllm_flags(CLI::App* cmd, VllmFlags& flags, CLI::Option* no_prefix_caching);

// One line for each given flag that changes nothing here, saying so.
std::vector<std::string> vllm_flag_notes(const VllmFlags& flags);

}  // namespace minimax::cli
