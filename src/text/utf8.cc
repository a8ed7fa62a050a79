// UTF-8 scanning, lossy repair and character classes for the tokenizer.
#include "text/utf8.h"

#include "text/regex.h"

namespace minimax::utf8 {
namespace {

// Range of the second byte allowed after `lead` (Unicode Table 3-7); the later bytes are 80..BF.
struct LeadInfo {
  size_t length;
  unsigned char second_low;
  unsigned char second_high;
};

LeadInfo lead_info(unsigned char lead) {
  if (lead < 0x80) return {1, 0, 0};
  if (lead >= 0xC2 && lead <= 0xDF) return {2, 0x80, 0xBF};
  if (lead == 0xE0) return {3, 0xA0, 0xBF};
  if (lead == 0xED) return {3, 0x80, 0x9F};
  if (lead >= 0xE1 && lead <= 0xEF) return {3, 0x80, 0xBF};
  if (lead == 0xF0) return {4, 0x90, 0xBF};
  if (lead >= 0xF1 && lead <= 0xF3) return {4, 0x80, 0xBF};
  if (lead == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};  // 80..C1 and F5..FF never start a character
}

}  // namespace

Sequence scan(std::string_view text, size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  const LeadInfo info = lead_info(lead);
  if (info.length == 0) return {SequenceKind::kInvalid, 1};
  for (size_t i = 1; i < info.length; ++i) {
    if (pos + i >= text.size()) return {SequenceKind::kTruncated, i};
    const auto byte = static_cast<unsigned char>(text[pos + i]);
    const unsigned char low = i == 1 ? info.second_low : 0x80;
    const unsigned char high = i == 1 ? info.second_high : 0xBF;
    if (byte < low || byte > high) return {SequenceKind::kInvalid, i};
  }
  return {SequenceKind::kValid, info.length};
}

bool is_valid(std::string_view text, size_t* error_offset) {
  size_t pos = 0;
  while (pos < text.size()) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const Sequence seq = scan(text, pos);
    if (seq.kind != SequenceKind::kValid) {
      if (error_offset != nullptr) *error_offset = pos;
      return false;
    }
    pos += seq.length;
  }
  return true;
}

std::string lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    const Sequence seq = scan(bytes, pos);
    if (seq.kind == SequenceKind::kValid) {
      out.append(bytes.substr(pos, seq.length));
    } else {
      out.append(kReplacementCharacter);
    }
    pos += seq.length;
  }
  return out;
}

char32_t decode(std::string_view text, size_t pos, size_t* length) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  const size_t n = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  char32_t cp = n == 1 ? lead : n == 2 ? (lead & 0x1F) : n == 3 ? (lead & 0x0F) : (lead & 0x07);
  for (size_t i = 1; i < n; ++i)
    cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  *length = n;
  return cp;
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool is_whitespace(char32_t cp) {
  if (cp >= 0x09 && cp <= 0x0D) return true;
  switch (cp) {
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool is_word_character(char32_t cp) {
  if (cp < 0x80) {
    return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
           cp == '_';
  }
  // Letters, letter numbers, decimal digits, marks, connector punctuation, ZWNJ/ZWJ.
  static const Regex word_class(R"([\p{L}\p{Nl}\p{Nd}\p{M}\p{Pc}\x{200C}\x{200D}])",
                                "single_word character class");
  std::string encoded;
  append(encoded, cp);
  return word_class.matches_whole(encoded);
}

char32_t last_code_point(std::string_view text) {
  size_t start = text.size() - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  size_t length = 0;
  return decode(text, start, &length);
}

}  // namespace minimax::utf8
