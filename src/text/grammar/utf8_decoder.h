// A UTF-8 decoder as a small automaton (RFC 3629, table 3-7: no overlong forms, no surrogates, at
// most U+10FFFF), for the parts of constrained decoding that reason about whole characters: the
// vocabulary trie's text classes and the grammar automaton's check that a rule takes every
// multi-byte character.
#pragma once

#include <cstdint>

namespace minimax {

// State 0 is between characters; the others are inside one and name what the next byte must be.
inline constexpr int kUtf8States = 8;

// The state after `b` from `state`, or -1 when the bytes are not well formed. ASCII bytes are
// characters of their own, allowed only when `ascii_allowed`.
constexpr int utf8_step(int state, uint8_t b, bool ascii_allowed = true) {
  const bool tail = (b & 0xC0) == 0x80;
  switch (state) {
    case 0:
      if (b < 0x80) return ascii_allowed ? 0 : -1;
      if (b >= 0xC2 && b <= 0xDF) return 1;  // one tail byte left
      if (b == 0xE0) return 3;               // A0-BF, then one tail
      if (b == 0xED) return 4;               // 80-9F, then one tail
      if (b >= 0xE1 && b <= 0xEF) return 2;  // two tail bytes left
      if (b == 0xF0) return 6;               // 90-BF, then two tails
      if (b == 0xF4) return 7;               // 80-8F, then two tails
      if (b >= 0xF1 && b <= 0xF3) return 5;  // three tail bytes left
      return -1;
    case 1:
      return tail ? 0 : -1;
    case 2:
      return tail ? 1 : -1;
    case 3:
      return b >= 0xA0 && b <= 0xBF ? 1 : -1;
    case 4:
      return b >= 0x80 && b <= 0x9F ? 1 : -1;
    case 5:
      return tail ? 2 : -1;
    case 6:
      return b >= 0x90 && b <= 0xBF ? 2 : -1;
    case 7:
      return b >= 0x80 && b <= 0x8F ? 2 : -1;
  }
  return -1;
}

}  // namespace minimax
