// The engine tests' fixture: one tiny checkpoint and tokenizer per architecture (and kernel
// configuration), built once per process, requests over byte ids, and a stream's events folded
// into what a client would have received.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "runtime/engine.h"
#include "text/bpe_tokenizer.h"

namespace minimax::engine_test {

struct TinyModel {
  std::unique_ptr<Model> model;
  std::unique_ptr<BpeTokenizer> tokenizer;
};

// `invariant`: bf16x2 activations with batch invariance on 2 threads (issue 35); else the
// binary's f32 pin on 1 thread.
TinyModel& tiny(Arch arch, bool invariant = false);

// A prompt of `n` ids in [0, 256) (byte tokens: no special ids), different for each `salt`.
std::vector<int32_t> prompt_ids(int n, int salt);

EngineRequest greedy_request(std::vector<int32_t> prompt, int64_t max_tokens);

// Everything a stream delivered.
struct Collected {
  std::vector<int32_t> tokens;
  std::string text;
  std::string finish_reason, stop_string, error;
  int32_t stop_token = -1;
  std::vector<std::optional<PromptLogprob>> prompt_logprobs;
  std::vector<SampleLogprobs> logprobs;
  int64_t prompt_tokens = 0, cached_prompt_tokens = 0, completion_tokens = 0;
  int events = 0;
};

// Folds one event into `out`; true when it was the finish.
bool absorb(Collected& out, const EngineEvent& event);
// Reads the stream to its finish; `out` may hold what was read from it before.
Collected collect(RequestStream& stream, Collected out = {});

}  // namespace minimax::engine_test
