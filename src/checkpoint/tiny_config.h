// config.json of a tiny model with the real M2 / M3 architecture and every field the real configs
// carry, sized so that every quantization layout applies (test fixtures for the whole engine).
#pragma once

#include <nlohmann/json.hpp>

#include "checkpoint/model_config.h"

namespace minimax {

// M2: 3 layers, hidden 64, 8 query / 2 KV heads of 16 (RoPE on 8 dims), 16 experts of width 32,
// top-4. M3 (minimax_m3_vl with text_config and a tiny vision_config): 5 layers, the first 3 dense
// (FFN width 128, dense attention) and 2 MoE + block-sparse (16 experts top-4 + one shared expert,
// 2 index heads of 16, blocks of 16 tokens, top-4 blocks, so block selection matters from 64
// tokens on). Every Linear input width is a multiple of 32, so MXFP4 (32) and NVFP4 (16) blocks
// divide. `vocab_size` is the tokenizer's size. The result has no quantization_config: add
// quantization_config_json(scheme, parse_model_config(...)) for a quantized layout.
nlohmann::json tiny_config_json(Arch arch, int vocab_size);

// The tiny configs widened for the parallel tests: hidden 128 and expert, shared and dense FFN
// widths of 256, so that every split at 2 ranks (and TP_EP's at 4) falls on 128-wide FP8 tiles
// and 32-wide MXFP4 blocks; heads as the tiny ones (8 query, 2 KV).
nlohmann::json parallel_config_json(Arch arch, int vocab_size);

// The CPU benchmark shapes (max_position_embeddings 196608, for long-context benchmarks).
// M2 (same field set as the tiny M2): hidden 1536, 10 layers, 24 query / 4 KV heads of 128 (RoPE
// on 64 dims), 64 experts of width 768, top-8: 2.48 B parameters at vocab 32768, 0.44 B active
// per token.
// M3 (same field set as the tiny M3): hidden 1536, 1 dense layer (FFN 3072, dense attention) then
// 11 MoE + MSA layers (64 experts of width 768, top-4, one shared expert of 768), 16 query / 4 KV
// heads of 128 (RoPE on 64 dims), the release's MSA geometry (4 index heads of 128, blocks of 128,
// top-16, local block forced).
nlohmann::json bench_config_json(int vocab_size, Arch arch = Arch::kM2);

}  // namespace minimax
