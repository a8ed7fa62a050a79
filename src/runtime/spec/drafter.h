// Draft-free drafters: tokens proposed from the sequence's own context (prompt lookup, vLLM's
// "ngram") or from a suffix match over the request and recent outputs (vLLM's "suffix" decoding),
// to be checked by the target model in one forward pass (runtime/spec/speculative_stepper.h, the
// engine's verify steps). A proposal is only a guess: acceptance decides what is emitted, so the
// drafters may be wrong at no cost to correctness.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/eagle3_head.h"
#include "runtime/spec/eagle3_drafter.h"
#include "runtime/spec/speculative_config.h"
#include "runtime/spec/token_index.h"

namespace minimax {

// Recent outputs shared by every request of one server (suffix decoding's global tree): at most
// `max_requests` outputs and kMaxTokens tokens, oldest dropped first. Thread-safe.
class RecentOutputs {
 public:
  static constexpr int64_t kMaxTokens = 4 << 20;
  static constexpr int kKeyLength = 2;
  explicit RecentOutputs(int max_requests);

  void add(std::span<const int32_t> output);
  // Candidate continuations: for each earlier occurrence of the last kKeyLength tokens of
  // `context` in a cached output, the match length (up to `max_depth`) and the tokens after it
  // (up to `max_tokens`). At most `limit` of them, most recent first.
  struct Match {
    int64_t length = 0;
    std::vector<int32_t> continuation;
  };
  std::vector<Match> find(std::span<const int32_t> context, int max_depth, int max_tokens,
                          int limit) const;
  int64_t size() const;

 private:
  struct Entry {
    int64_t id;
    std::vector<int32_t> tokens;
  };
  const Entry* entry(int64_t id) const;

  mutable std::mutex mutex_;
  int max_requests_;
  int64_t next_id_ = 0, tokens_ = 0;
  std::deque<Entry> entries_;  // ids ascending, consecutive
  // key hash → (output id, end) ascending; entries of dropped outputs are skipped and pruned.
  mutable std::unordered_map<uint64_t, std::vector<std::pair<int64_t, int64_t>>> ends_;
};

// One sequence's drafter.
class Drafter {
 public:
  // `recent` (suffix method only; may be null) is shared with other sequences. `head` (eagle3
  // only, required there) is the loaded draft head (runtime/spec/draft_head.h).
  // `taps` (eagle3, may be null): the server's store of taps of whole blocks, shared too.
  Drafter(const SpeculativeConfig& config, std::shared_ptr<RecentOutputs> recent,
          std::shared_ptr<Eagle3Head> head = nullptr, std::shared_ptr<TapStore> taps = nullptr);

  // eagle3: the target's hidden-state taps of positions [first, first + count) of this sequence
  // (Model::hidden_taps rows). Ignored by the draft-free methods.
  void add_taps(int64_t first, int64_t count, std::span<const float> taps);
  bool wants_taps() const { return eagle_ != nullptr; }

  // Up to `max_tokens` tokens to follow `tokens` (the whole sequence: prompt and output so far).
  // Empty when nothing in the context predicts a continuation.
  std::vector<int32_t> propose(std::span<const int32_t> tokens, int max_tokens);
  // propose() for the sequences of one step: EAGLE-3 drafters of the same head draft together
  // (one head pass for all of them per drafted position, Eagle3Drafter::propose_batch).
  static std::vector<std::vector<int32_t>> propose_batch(
      std::span<Drafter* const> drafters, std::span<const std::span<const int32_t>> tokens,
      std::span<const int> max_tokens);
  // The sequence ended: suffix decoding remembers `output` for later requests.
  void finish(std::span<const int32_t> output);

 private:
  std::vector<int32_t> propose_ngram(std::span<const int32_t> tokens, int max_tokens);
  std::vector<int32_t> propose_suffix(std::span<const int32_t> tokens, int max_tokens);

  SpeculativeConfig config_;
  std::shared_ptr<RecentOutputs> recent_;
  TokenIndex index_;
  std::shared_ptr<Eagle3Head> head_;
  std::unique_ptr<Eagle3Drafter> eagle_;
};

}  // namespace minimax
