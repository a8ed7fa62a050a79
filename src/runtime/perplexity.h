// Perplexity of a text and KL divergence against a base run, scored as llama-perplexity scores
// them (docs/perplexity.md): the text's tokens are cut into non-overlapping windows of `context`
// tokens from the start (a remainder shorter than a window is not scored), each window runs from
// an empty KV cache, and in each window the logits of positions context/2 .. context-2 are scored
// against the token that follows them: the first half is context only, so that every scored
// token sees at least half a window before it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "model/model.h"
#include "runtime/checkpoint_text.h"
#include "runtime/kl_base_file.h"
#include "runtime/perplexity_stats.h"
#include "text/bpe_tokenizer.h"

namespace minimax {

struct PerplexityWindows {
  int64_t context = 0;            // tokens per window
  int64_t windows = 0;            // whole windows in the text
  int64_t first = 0;              // the first scored position of a window (context / 2)
  int64_t scored_per_window = 0;  // context - 1 - first
  int64_t positions() const { return windows * scored_per_window; }
};

// The windows of a text of `token_count` tokens. Error when context is below 4 (a window must
// score at least one position after at least two of context) or the text is shorter than one
// window (the message says how many tokens it has and how many a window needs).
PerplexityWindows plan_perplexity_windows(int64_t token_count, int64_t context);

// The text's ids as they are scored: tokenized as is, special tokens written in it becoming their
// ids (as the engine encodes a prompt; llama-perplexity leaves them as text), no chat template, and
// the BOS token in front when tokenizer_config.json's add_bos_token says so (`text.bos_token_id`).
std::vector<int32_t> perplexity_tokens(std::string_view text, const BpeTokenizer& tokenizer,
                                       const CheckpointText& settings);

// The header of a base written for `tokens` cut into `windows`, `vocab` logits per position.
KlBaseHeader perplexity_base_header(const PerplexityWindows& windows,
                                    std::span<const int32_t> tokens, int64_t vocab, uint32_t top_k);

struct PerplexityOptions {
  int64_t context = 512;
  KvDtype kv_dtype = KvDtype::kF32;
  // With add_bos_token, the first token of every window is BOS (llama-perplexity's rule: each
  // window starts a sequence); null otherwise.
  std::optional<int32_t> window_bos;
  // The scored half runs in calls of as many positions as keep their logits under this many bytes
  // (a 200K vocabulary has 0.8 MB of logits per position).
  int64_t max_logits_bytes = int64_t{256} << 20;
};

struct PerplexityResult {
  PerplexityWindows windows;
  MeanEstimate nll;                        // of every scored position, in nats
  std::optional<KlComparison> comparison;  // when compared with a base
};

// Scores `tokens` on `model` (rank 0 of a parallel group; the other ranks follow). With `write`
// (whose header is perplexity_base_header of the same windows) every scored position's top-K goes
// into it, uncommitted; with `compare` (already checked against this run's header) every position
// is compared with the base's. `on_window(done)` is called after each window.
PerplexityResult run_perplexity(Model& model, std::span<const int32_t> tokens,
                                const PerplexityOptions& options, KlBaseWriter* write,
                                const KlBaseReader* compare,
                                const std::function<void(int64_t)>& on_window = {});

}  // namespace minimax
