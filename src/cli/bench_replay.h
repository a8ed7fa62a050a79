// `minimax bench --replay FILE.jsonl --speculative-config JSON`: speculative decoding measured on
// recorded text. Each line is {"prompt": TEXT, "output": TEXT} (raw text, no chat template). The
// prompt is prefilled; then the output's tokens are decoded as forced tokens, drafting and
// verifying as a generation would, so every step does its real work on any checkpoint (random
// benchmark weights included) and acceptance reflects the text. The same replay runs without
// speculation too, alternating, best of --repeat rounds each.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/spec/speculative_config.h"
#include "runtime/text_model.h"

namespace minimax::cli {

struct ReplayCase {
  std::string prompt, output;
};
// Reads FILE.jsonl; errors name the file, the line and the key.
std::vector<ReplayCase> read_replay_file(const std::string& path);

struct ReplayOptions {
  SpeculativeConfig spec;
  int repeat = 3;
  KvDtype kv_dtype = KvDtype::kF32;
  bool quiet = false;
};

// Per case and overall: plain_decode_tok_s, spec_decode_tok_s, speedup (the median over cases
// overall), mean_accepted_length (tokens emitted per verify step that carried a draft, the
// model's own token included: 1.0 = nothing accepted), num_speculative_tokens, and the counts.
nlohmann::ordered_json run_replay(TextModel& model, const std::vector<ReplayCase>& cases,
                                  const ReplayOptions& options);
// The table `bench --replay` prints without --json.
void print_replay(const nlohmann::ordered_json& report);

}  // namespace minimax::cli
