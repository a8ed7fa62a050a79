// IncrementalDetokenizer: emits the longest prefix of the pending bytes whose UTF-8 is settled.
#include "text/detokenizer.h"

#include "text/utf8.h"

namespace minimax {

IncrementalDetokenizer::IncrementalDetokenizer(const BpeTokenizer& tokenizer, bool skip_special)
    : tokenizer_(tokenizer), skip_special_(skip_special) {}

std::string IncrementalDetokenizer::push(int32_t id) {
  if (skip_special_ && tokenizer_.is_special(id)) return {};
  pending_.append(tokenizer_.token_bytes(id));
  std::string out;
  size_t pos = 0;
  while (pos < pending_.size()) {
    const utf8::Sequence seq = utf8::scan(pending_, pos);
    // A truncated tail may still become a character: keep it for the next token.
    if (seq.kind == utf8::SequenceKind::kTruncated) break;
    if (seq.kind == utf8::SequenceKind::kValid) {
      out.append(pending_, pos, seq.length);
    } else {
      out.append(utf8::kReplacementCharacter);
    }
    pos += seq.length;
  }
  pending_.erase(0, pos);
  return out;
}

std::string IncrementalDetokenizer::flush() {
  std::string out = utf8::lossy(pending_);
  pending_.clear();
  return out;
}

}  // namespace minimax
