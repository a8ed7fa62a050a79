// The text-side settings a checkpoint directory carries beside its weights: sampling defaults and
// end-of-sequence ids (generation_config.json), special-token strings and the chat template
// (tokenizer_config.json, or chat_template.jinja, or the built-in template of the architecture).
// Every file is optional; what is absent keeps its default.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/model_config.h"
#include "runtime/sampler.h"
#include "text/bpe_tokenizer.h"

namespace minimax {

struct CheckpointText {
  // temperature, top_p, top_k, min_p, repetition_penalty from generation_config.json (the keys
  // vLLM takes as request defaults; do_sample is ignored, as vLLM does).
  SamplingParams sampling;
  int64_t max_new_tokens = 0;  // generation_config's max_new_tokens, 0 when absent
  // generation_config's eos_token_id (an id or a list) and tokenizer_config's eos_token,
  // deduplicated, in that order.
  std::vector<int32_t> eos_token_ids;
  std::string bos_token, eos_token;     // tokenizer_config strings, "" when absent
  std::optional<int32_t> bos_token_id;  // bos_token's id, when the tokenizer has it
  // tokenizer_config's add_bos_token (false when absent, as for GPT2Tokenizer): whether a text
  // encoded without a chat template starts with BOS (`minimax perplexity`; a chat template writes
  // its own).
  bool add_bos_token = false;
  std::string chat_template;         // Jinja source
  std::string chat_template_origin;  // the file it came from, or "built-in <name>"
};

// Reads DIR/generation_config.json, DIR/tokenizer_config.json and DIR/chat_template.jinja.
// Errors name the file and field (a wrong JSON type, an eos_token the tokenizer lacks).
CheckpointText load_checkpoint_text(const std::string& dir, const BpeTokenizer& tokenizer,
                                    Arch arch);

// The markers around reasoning, from the architecture's record: <think>/</think> for M2,
// <mm:think>/</mm:think> for M3.
struct ThinkMarkers {
  std::string open, close;
};
ThinkMarkers think_markers(Arch arch);

}  // namespace minimax
