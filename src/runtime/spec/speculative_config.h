// Draft-free speculative decoding settings, spelled as vLLM's --speculative-config JSON:
//   {"method": "ngram", "num_speculative_tokens": 8, "prompt_lookup_min": 2, "prompt_lookup_max":
//   5}
//   {"method": "suffix", "suffix_decoding_max_tree_depth": 24, ...}
// One parser for serve, generate, chat, bench and recipes, so every front end refuses the same
// inputs with the same named errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace minimax {

enum class DraftMethod : uint8_t { kNgram, kSuffix, kEagle3 };
std::string_view draft_method_name(DraftMethod method);  // "ngram", "suffix", "eagle3"

struct SpeculativeConfig {
  DraftMethod method = DraftMethod::kNgram;
  // The most draft tokens one verify step carries (vLLM's num_speculative_tokens). The shipped
  // default is long because a MoE verify step reads the union of its tokens' experts: short drafts
  // pay most of that cost and gain little (docs/speculative.md, measured there).
  int num_speculative_tokens = 24;
  // ngram (prompt lookup): the longest suffix of the sequence, between these lengths, that occurred
  // before proposes the tokens that followed its most recent occurrence. A long maximum finds the
  // place a copy comes from rather than the latest place a common short run occurred.
  int prompt_lookup_min = 2;
  int prompt_lookup_max = 16;
  // suffix: vLLM's suffix_decoding_* keys. A draft follows the most frequent continuation of the
  // longest matched suffix (at most max_tree_depth tokens) in the request and in recent outputs; it
  // stops where the continuation's estimated probability falls below min_token_prob, and is at most
  // max_spec_factor × the match length (and num_speculative_tokens) long.
  int suffix_max_tree_depth = 24;
  int suffix_max_cached_requests = 10000;
  double suffix_max_spec_factor = 1.0;
  double suffix_min_token_prob = 0.1;
  // Off: verify every draft (tests and replays that must see each proposal checked). On: a step
  // carries a sequence's draft only when its expected gain beats the cost of the experts it reads.
  bool adaptive = true;
  // eagle3: the draft head's directory (vLLM's "model"; docs/eagle3.md). Its drafts are a chain of
  // num_speculative_tokens (default kEagle3DefaultTokens) greedy tokens of the head.
  std::string model;
};
inline constexpr int kEagle3DefaultTokens = 3;

// Parses the JSON text. Errors name `flag` and the key: an unknown key, a method other than ngram,
// suffix or eagle3 (other draft models are named as not supported), a value out of range. The
// eagle3 head's directory is read when the target model is loaded (runtime/spec/draft_head.h).
SpeculativeConfig parse_speculative_config(std::string_view json_text,
                                           std::string_view flag = "--speculative-config");
// The JSON form (every key), for logs, `bench --json` and round trips.
std::string speculative_config_json(const SpeculativeConfig& config);

}  // namespace minimax
