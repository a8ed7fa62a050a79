// The checkpoint a command runs, given as --model DIR (vLLM's spelling) or as the first argument
// (`minimax serve DIR`, as `vllm serve DIR`). One helper so that every command that takes a model
// accepts both the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace minimax::cli {

// Adds --model into `model` and a positional MODEL that stands for it. The positional is handed to
// --model (so --dry-run recipes and --config see one `model` key); both given and different is an
// Error naming both. Neither is required by the parser: the command calls check_model_path
// (cli/model_path_check.h), which also says how to give a model when none was.
CLI::Option* add_model_flag(CLI::App* cmd, std::string& model, const std::string& help);

// The name of the model directory `path` ("/models/MiniMax-M2.5/" → "MiniMax-M2.5"): what `serve`
// calls the model in the API unless --served-model-name says otherwise.
std::string model_directory_name(const std::string& path);

}  // namespace minimax::cli
