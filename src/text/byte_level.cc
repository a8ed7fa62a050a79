// GPT-2 byte <-> character tables, built once.
#include "text/byte_level.h"

#include <array>

#include "text/utf8.h"

namespace minimax {
namespace {

struct Tables {
  std::array<char32_t, 256> byte_to_char{};
  std::array<std::string, 256> byte_to_utf8{};
  // The alphabet only uses code points below 0x144, so the reverse map is a flat array.
  static constexpr char32_t kReverseSize = 0x200;
  std::array<int16_t, kReverseSize> char_to_byte{};

  Tables() {
    char_to_byte.fill(-1);
    char32_t next_shifted = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const char32_t cp = printable ? static_cast<char32_t>(b) : next_shifted++;
      byte_to_char[b] = cp;
      utf8::append(byte_to_utf8[b], cp);
      char_to_byte[cp] = static_cast<int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables instance;
  return instance;
}

}  // namespace

char32_t byte_to_unicode(uint8_t byte) { return tables().byte_to_char[byte]; }

std::optional<uint8_t> unicode_to_byte(char32_t code_point) {
  if (code_point >= Tables::kReverseSize) return std::nullopt;
  const int16_t b = tables().char_to_byte[code_point];
  if (b < 0) return std::nullopt;
  return static_cast<uint8_t>(b);
}

std::string to_byte_level(std::string_view bytes) {
  const Tables& t = tables();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out.append(t.byte_to_utf8[static_cast<unsigned char>(c)]);
  return out;
}

bool append_from_byte_level(std::string_view token, std::string& out) {
  const size_t start = out.size();
  size_t pos = 0;
  while (pos < token.size()) {
    const utf8::Sequence seq = utf8::scan(token, pos);
    std::optional<uint8_t> byte;
    if (seq.kind == utf8::SequenceKind::kValid) {
      size_t length = 0;
      byte = unicode_to_byte(utf8::decode(token, pos, &length));
    }
    if (!byte) {
      out.resize(start);
      return false;
    }
    out.push_back(static_cast<char>(*byte));
    pos += seq.length;
  }
  return true;
}

}  // namespace minimax
