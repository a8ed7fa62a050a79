// --kv-cache-dtype (vLLM's name), shared by every command that runs the model: the element type
// of the KV cache. auto = bf16 (half the memory and bandwidth of f32; measured accuracy in
// docs/kernels.md "KV cache types").
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "kernels/ops.h"

namespace minimax::cli {

// Adds --kv-cache-dtype auto|f32|bf16|fp8_e4m3|fp8 (vLLM's name for fp8_e4m3) into `value` (kept
// "auto" when not given); any other value is refused by the parser with a message naming the flag.
void add_kv_cache_dtype_flag(CLI::App* cmd, std::string& value);

// The KvDtype of a --kv-cache-dtype value; Error naming the flag for an unknown one.
KvDtype kv_cache_dtype(const std::string& value);

}  // namespace minimax::cli
