// Tests of the GPT-2 byte alphabet and the UTF-8 helpers under the tokenizer.
#include "text/byte_level.h"

#include <gtest/gtest.h>

#include <set>

#include "text/utf8.h"

namespace minimax {
namespace {

TEST(ByteLevel, AlphabetIsABijectionOverAllBytes) {
  std::set<char32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const char32_t cp = byte_to_unicode(static_cast<uint8_t>(b));
    EXPECT_TRUE(seen.insert(cp).second) << "byte " << b << " shares a character";
    const auto back = unicode_to_byte(cp);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, b);
  }
}

TEST(ByteLevel, KnownCharacters) {
  EXPECT_EQ(byte_to_unicode(' '), U'\u0120');   // "Ġ"
  EXPECT_EQ(byte_to_unicode('\n'), U'\u010A');  // "Ċ"
  EXPECT_EQ(byte_to_unicode('a'), U'a');
  EXPECT_EQ(byte_to_unicode(0xE9), U'\u00E9');  // printable Latin-1 stays itself
  EXPECT_EQ(byte_to_unicode(0xAD), U'\u0143');  // soft hyphen is the last shifted byte
  EXPECT_FALSE(unicode_to_byte(U' ').has_value());
  EXPECT_FALSE(unicode_to_byte(U'\u4E2D').has_value());
}

TEST(ByteLevel, RoundTripsArbitraryBytes) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  const std::string mapped = to_byte_level(all);
  EXPECT_TRUE(utf8::is_valid(mapped));
  std::string back;
  ASSERT_TRUE(append_from_byte_level(mapped, back));
  EXPECT_EQ(back, all);
  EXPECT_EQ(to_byte_level(" world"), "\xC4\xA0world");
}

TEST(ByteLevel, TokenOutsideTheAlphabetIsRejectedWithoutOutput) {
  std::string out = "x";
  EXPECT_FALSE(append_from_byte_level("<a b>", out));  // a plain space is not in the alphabet
  EXPECT_EQ(out, "x");
}

TEST(Utf8, LossyReplacesEachMaximalInvalidSubpart) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(utf8::lossy("abc"), "abc");
  EXPECT_EQ(utf8::lossy("\xF0\x9F\x91\x8D"), "\xF0\x9F\x91\x8D");
  EXPECT_EQ(utf8::lossy("\xF0\x9F"), fffd);  // truncated at the end: one
  EXPECT_EQ(utf8::lossy("\xF0\x9F"
                        "A"),
            fffd + "A");                                       // cut by an ASCII byte: one
  EXPECT_EQ(utf8::lossy("\x80\x80"), fffd + fffd);             // lone continuations: one each
  EXPECT_EQ(utf8::lossy("\xE0\x80"), fffd + fffd);             // E0 needs A0..BF next
  EXPECT_EQ(utf8::lossy("\xED\xA0\x80"), fffd + fffd + fffd);  // surrogates are invalid
  EXPECT_EQ(utf8::lossy("\xC0\xAF"), fffd + fffd);             // overlong lead
  EXPECT_EQ(utf8::lossy("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // above U+10FFFF
}

TEST(Utf8, ValidityReportsTheFirstBadByte) {
  size_t offset = 99;
  EXPECT_TRUE(utf8::is_valid("h\xC3\xA9llo"));
  EXPECT_FALSE(utf8::is_valid("ab\xFFz", &offset));
  EXPECT_EQ(offset, 2u);
}

TEST(Utf8, CharacterClasses) {
  EXPECT_TRUE(utf8::is_whitespace(U'\u3000'));
  EXPECT_TRUE(utf8::is_whitespace(U'\t'));
  EXPECT_FALSE(utf8::is_whitespace(U'\u200B'));  // zero width space is not White_Space
  EXPECT_TRUE(utf8::is_word_character(U'_'));
  EXPECT_TRUE(utf8::is_word_character(U'\u00FC'));  // ü
  EXPECT_TRUE(utf8::is_word_character(U'\u4E2D'));  // 中
  EXPECT_FALSE(utf8::is_word_character(U'.'));
  EXPECT_FALSE(utf8::is_word_character(U'\U0001F44D'));  // 👍
}

}  // namespace
}  // namespace minimax
