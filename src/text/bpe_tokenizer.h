// Byte-level BPE tokenizer loaded from a Hugging Face tokenizer.json. Encoding follows Hugging Face
// `tokenizers` (added tokens split out first, then the pre-tokenizer's regex splits and ByteLevel
// mapping, then BPE by merge rank); it never adds BOS/EOS (post_processor is not applied), so
// encode(text) equals HF's encode(text, add_special_tokens=False). Copies share one immutable state
// and are safe to use from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/added_tokens.h"

namespace minimax {

class BpeTokenizer {
 public:
  // Reads and parses `tokenizer_json_path`; errors name the file and the field at fault.
  static BpeTokenizer from_file(const std::string& tokenizer_json_path);
  // Builds from parsed JSON; `source` (usually the path) prefixes every error message.
  static BpeTokenizer from_json(const nlohmann::json& tokenizer_json, const std::string& source);

  // Encodes UTF-8 text (invalid UTF-8 throws Error). Added tokens written literally in the text
  // become their ids; special ones only when `parse_special` is true, else they are BPE-encoded
  // like any text (HF's encode_special_tokens). Non-special added tokens are always split out.
  std::vector<int32_t> encode(std::string_view text, bool parse_special = true) const;
  // The special tokens encode(text, true) finds in `text`, in order: byte ranges (with the
  // whitespace their lstrip/rstrip flags absorb) and ids. Everything between them is what
  // encode(piece, false) would encode.
  std::vector<TextSegment> special_tokens_in(std::string_view text) const;

  // Concatenates the tokens' bytes and repairs invalid UTF-8 with U+FFFD (one per maximal invalid
  // subpart), as HF's ByteLevel decoder does. Ids without a token are skipped, as in HF.
  std::string decode(std::span<const int32_t> ids, bool skip_special = false) const;

  std::optional<int32_t> token_id(std::string_view token) const;  // vocab or added token
  // The token as stored (byte-level form, e.g. "Ġworld"); "" for an unused id inside the range.
  // Throws Error for ids outside [0, vocab_size()).
  std::string_view token_text(int32_t id) const;
  int32_t vocab_size() const;  // max id + 1
  bool is_special(int32_t id) const;

  // The raw bytes `id` decodes to (possibly a partial UTF-8 character); "" for an unknown id.
  std::string_view token_bytes(int32_t id) const;
  // The added tokens in file order, with the ids they resolved to.
  const std::vector<AddedToken>& added_tokens() const;
  const std::string& source() const;

  struct Impl;  // internal state (bpe_tokenizer_impl.h), named here only for the loader

 private:
  explicit BpeTokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace minimax
