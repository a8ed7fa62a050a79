// Where each short run of tokens occurred in a growing token sequence: the lookup behind the
// draft-free drafters (runtime/spec/drafter.h). Keys are runs of `key_length` tokens, hashed; an
// occurrence is recorded by its end, the position of the token that followed it.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace minimax {

class TokenIndex {
 public:
  explicit TokenIndex(int key_length);

  int key_length() const { return key_length_; }
  // Indexes the runs of `tokens` that end at positions not indexed yet. `tokens` is the whole
  // sequence so far: it grows between calls; when it is shorter than before (a rollback), the
  // index is rebuilt.
  void extend(std::span<const int32_t> tokens);
  // Ends e (the run is tokens[e - key_length, e)) of earlier occurrences of the last key_length
  // tokens of `tokens`, excluding the last run itself, most recent first, at most `limit`. The
  // ends are < tokens.size(), so tokens[e] is the token that followed.
  std::vector<int64_t> earlier_ends(std::span<const int32_t> tokens, int limit) const;

  static uint64_t hash_run(std::span<const int32_t> run);

 private:
  int key_length_;
  int64_t indexed_ = 0;  // runs ending before this position are indexed
  std::unordered_map<uint64_t, std::vector<int64_t>> ends_;  // ascending per key
};

// Length of the common suffix of a[0, a_end) and b[0, b_end), at most `limit`.
int64_t common_suffix(std::span<const int32_t> a, int64_t a_end, std::span<const int32_t> b,
                      int64_t b_end, int64_t limit);

}  // namespace minimax
