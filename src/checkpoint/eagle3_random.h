// A deterministic random EAGLE-3 head for a target config, in the published layout
// (docs/eagle3.md): for lossless tests on the tiny models and for measuring the head's cost at a
// released model's width (`minimax make-tiny --draft eagle3 --hf-config CONFIG`). Its drafts are
// noise; only a trained head (tools/train_eagle3.py) proposes what the target says.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/model_config.h"

namespace minimax {

struct Eagle3HeadShape {
  int intermediate_size = 0;  // 0: 8/3 × hidden, rounded up to 64
  int draft_vocab_size = 0;   // 0: min(vocab, 32000) (published heads use 32000)
};

// Writes config.json and model.safetensors (bf16 weights, I64 d2t, BOOL t2d) for `target` into
// directory `dir` (created; must not exist unless `force`), as one atomic directory. The head is
// as wide as the target, with its attention heads, and taps the default layers 2, L/2, L-3.
void write_random_eagle3_head(const std::string& dir, const ModelConfig& target,
                              const Eagle3HeadShape& shape, uint64_t seed, bool force);

}  // namespace minimax
