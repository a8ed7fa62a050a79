#include "cli/kv_cache_flag.h"

#include "base/error.h"

namespace minimax::cli {

void add_kv_cache_dtype_flag(CLI::App* cmd, std::string& value) {
  value = "auto";
  cmd->add_option("--kv-cache-dtype", value,
                  "KV cache element type: auto (= f32: bf16 and fp8 move the bundled model's "
                  "predictions beyond the quality budget of docs/perplexity.md), f32, bf16 (half "
                  "the memory), fp8_e4m3 (a quarter; e4m3fn, per-tensor scale 1.0, saturating; fp8 "
                  "is the same, vLLM's name)")
      ->check(CLI::IsMember({"auto", "f32", "bf16", "fp8_e4m3", "fp8"}))
      ->capture_default_str();
}

KvDtype kv_cache_dtype(const std::string& value) {
  // auto: the type within the quality budget (docs/perplexity.md "The default precision").
  if (value == "auto" || value == "f32") return KvDtype::kF32;
  if (value == "bf16") return KvDtype::kBF16;
  // vLLM's "fp8" is e4m3 on the GPUs MiniMax's guides deploy on; so it is here.
  if (value == "fp8_e4m3" || value == "fp8") return KvDtype::kFp8E4m3;
  fail("--kv-cache-dtype: unknown value '{}' (expected auto, f32, bf16, fp8_e4m3 or fp8)", value);
}

}  // namespace minimax::cli
