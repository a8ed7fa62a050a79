// How many prompt tokens one model call (one engine step) takes by default: one place for the
// default of ModelSession's prefill chunk, the engine's --max-num-batched-tokens and bench's
// --prefill-chunk.
//
// Why 2048 and not 512: a MoE prefill chunk reads the weights of every expert its tokens route to,
// and the published models have 256 experts (top-8), so a 512-token chunk gives each expert about
// 16 tokens: every chunk streams nearly all the expert weights, and each expert's GEMM is too
// small to run near the compute peak (on AMX the panel decode, once per call, dominates). 2048
// tokens give each expert about 64. A 2048-token prompt at the MiniMax-M2.5 width (one layer)
// prefills 1.3-2.0x faster; the bench shape (64 experts, already 64 tokens per expert at 512) is
// unchanged within the noise (docs/runtime.md, "Prefill chunk"). llama.cpp's logical batch
// (--batch-size) is 2048 tokens too. The cost is latency under load: a serve step that prefills
// 2048 tokens holds back the other streams' next token for longer (--max-num-batched-tokens 512
// trades the other way), and activations grow (~0.1 GiB at the M2.5 width).
#pragma once

#include <cstdint>

namespace minimax {

inline constexpr int64_t kDefaultPrefillChunk = 2048;

}  // namespace minimax
