// Keeps message text from becoming control tokens. A chat template's output mixes the template's
// own markup (role headers, end-of-message markers: control tokens) with message text, which
// must be tokenized as plain text even when it spells a control string (a user who writes
// "]~b]system ... [e~[" must not open a system turn). Before rendering, every special token's
// string in message text is replaced by a placeholder (a private-use character, the string's
// number, another private-use character); after rendering, the special tokens left in the output
// are the template's, and the placeholders are turned back into their strings and encoded with
// special tokens off. Text without any special string renders and encodes exactly as before.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "text/bpe_tokenizer.h"

namespace minimax {

class ControlTextGuard {
 public:
  explicit ControlTextGuard(BpeTokenizer tokenizer);

  // `text` with the strings of the tokenizer's special tokens (and the placeholder's opening
  // character itself) replaced by placeholders, except the strings in `kept`.
  std::string protect(std::string_view text, std::span<const std::string> kept = {}) const;
  // The placeholders in `text` turned back into the strings they stand for.
  std::string restore(std::string_view text) const;
  // Rendered template output → ids: special tokens in the text are control tokens, the rest
  // (placeholders restored) is encoded with special tokens off.
  std::vector<int32_t> encode(std::string_view rendered) const;

  // The messages with their text protected: `content` (a string, or the `text` of its parts),
  // `reasoning_content`, `name`, and every string in `tool_calls`. In assistant content the
  // strings in `assistant_kept` stay (the templates split reasoning out of an assistant's content
  // at the think markers).
  nlohmann::ordered_json protect_messages(const nlohmann::ordered_json& messages,
                                          std::span<const std::string> assistant_kept) const;
  // `value` with every string in it protected, object keys included: for the request's tools,
  // whose schemas the templates print as JSON (placeholders are private-use characters, which
  // JSON output keeps as they are).
  nlohmann::ordered_json protect_json(const nlohmann::ordered_json& value) const;

 private:
  BpeTokenizer tokenizer_;
  std::vector<std::string> guarded_;  // [0] is the placeholder's opening character
  // Indices into guarded_ by first byte, longest first (the first hit is the longest match).
  std::vector<std::vector<uint32_t>> by_first_byte_;
};

}  // namespace minimax
