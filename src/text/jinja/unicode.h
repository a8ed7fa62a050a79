// UTF-8 helpers for the Jinja interpreter: Python strings count, index and strip by code point, and
// treat the Unicode whitespace that str.isspace() knows as whitespace.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace minimax::jinja {

// Splits UTF-8 text into code points; a malformed byte becomes U+FFFD (input comes from JSON that
// nlohmann already validated, so this only guards against misuse).
std::vector<char32_t> decode_utf8(std::string_view text);
void append_utf8(std::string& out, char32_t code_point);
std::string encode_utf8(const std::vector<char32_t>& code_points, size_t begin, size_t end);

// Number of code points (Python's len(str)).
size_t count_code_points(std::string_view text);

// Python's str.isspace() for one code point.
bool is_python_space(char32_t c);

// Python's str.strip()/lstrip()/rstrip(): with `chars` absent, Unicode whitespace.
std::string strip_python(std::string_view text, const std::string* chars, bool left, bool right);

// Case mapping for ASCII, Latin-1, Greek and Cyrillic letters (the scripts a chat template may
// plausibly lower-case); other code points are left as they are.
char32_t to_lower(char32_t c);
char32_t to_upper(char32_t c);
std::string lower_string(std::string_view text);
std::string upper_string(std::string_view text);

// Python's str.isprintable() for one code point, approximated without the Unicode database: C0/C1
// controls, non-space separators, format characters, surrogates and private use are unprintable.
bool is_python_printable(char32_t c);

}  // namespace minimax::jinja
