// The GPT-2 byte-level alphabet: every byte 0..255 is shown as one printable Unicode character
// (printable Latin-1 bytes as themselves, the others as U+0100 onwards), so byte-level BPE tokens
// are ordinary strings such as "Ġworld" (space = "Ġ", U+0120).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace minimax {

// The character that stands for `byte`.
char32_t byte_to_unicode(uint8_t byte);

// The byte a character stands for, or nothing if the character is outside the alphabet.
std::optional<uint8_t> unicode_to_byte(char32_t code_point);

// Maps raw bytes to their byte-level characters (UTF-8 encoded).
std::string to_byte_level(std::string_view bytes);

// Maps a byte-level token back to raw bytes and appends them to `out`. Returns false (appending
// nothing) if any character is outside the alphabet; Hugging Face's ByteLevel decoder then keeps
// the token's own UTF-8 bytes, which callers do by appending `token` itself.
bool append_from_byte_level(std::string_view token, std::string& out);

}  // namespace minimax
