// UTF-8 helpers for the tokenizer: sequence scanning by the Unicode well-formedness table, lossy
// repair that matches Rust's String::from_utf8_lossy (one U+FFFD per maximal invalid subpart), and
// the few Unicode character classes the added-token rules need.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace minimax::utf8 {

// What the bytes at one position hold.
enum class SequenceKind {
  kValid,      // a complete, well-formed character of `length` bytes
  kInvalid,    // `length` bytes (at least one) that can never become a character
  kTruncated,  // `length` bytes that are a well-formed prefix cut off by the end of the input
};

struct Sequence {
  SequenceKind kind;
  size_t length;
};

// Classifies the bytes starting at `pos` (pos < text.size()).
Sequence scan(std::string_view text, size_t pos);

// True if `text` is well-formed UTF-8; otherwise stores the offset of the first bad byte.
bool is_valid(std::string_view text, size_t* error_offset = nullptr);

// Replaces every maximal invalid subpart (and a truncated tail) with U+FFFD.
std::string lossy(std::string_view bytes);

// Decodes the well-formed character at `pos` and stores its length. Requires valid input.
char32_t decode(std::string_view text, size_t pos, size_t* length);

// Appends the UTF-8 encoding of `code_point`.
void append(std::string& out, char32_t code_point);

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// Unicode White_Space property (what Rust's char::is_whitespace and regex \s accept).
bool is_whitespace(char32_t code_point);

// A word character in the sense of Rust's Unicode regex \w (letters, marks, decimal digits,
// connector punctuation, joiners), used for added tokens with single_word.
bool is_word_character(char32_t code_point);

// The code point that ends `text` (text must be non-empty valid UTF-8).
char32_t last_code_point(std::string_view text);

}  // namespace minimax::utf8
