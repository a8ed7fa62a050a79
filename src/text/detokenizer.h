// Incremental, UTF-8 safe detokenization for streaming: ids go in one at a time and only complete
// UTF-8 text comes out. Bytes of a character split across tokens are held until it is complete;
// bytes that can no longer form a character become U+FFFD as soon as that is certain. The
// concatenation of all push() results and flush() equals BpeTokenizer::decode of all the ids.
#pragma once

#include <cstdint>
#include <string>

#include "text/bpe_tokenizer.h"

namespace minimax {

class IncrementalDetokenizer {
 public:
  // Keeps a (cheap, shared) copy of the tokenizer. With `skip_special`, special tokens produce
  // nothing, as in decode(ids, true).
  explicit IncrementalDetokenizer(const BpeTokenizer& tokenizer, bool skip_special = false);

  // Adds one id; returns the text that became complete (possibly empty).
  std::string push(int32_t id);

  // Ends the stream: a held incomplete character becomes U+FFFD. The detokenizer can be reused.
  std::string flush();

  // Bytes held back because they may still complete a character (0 to 3).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  BpeTokenizer tokenizer_;
  bool skip_special_;
  std::string pending_;
};

}  // namespace minimax
