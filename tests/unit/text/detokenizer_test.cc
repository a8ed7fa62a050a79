// Tests of the incremental detokenizer: characters split across tokens are held back, invalid
// bytes become U+FFFD as soon as that is certain, and the stream equals decode() of all ids.
#include "text/detokenizer.h"

#include <gtest/gtest.h>

#include "test_data.h"
#include "text/utf8.h"

namespace minimax {
namespace {

using testing::trained;

const std::string kFffd = "\xEF\xBF\xBD";

TEST(IncrementalDetokenizer, EmojiSplitAcrossTokensComeOutWhole) {
  const std::string text =
      "Emoji: 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇩🇪 🧑🏿‍💻 中文 "
      "done";
  const std::vector<int32_t> ids = trained().encode(text);
  // The small vocabulary spells most emoji out of byte tokens, so characters do get split.
  int partial_tokens = 0;
  for (int32_t id : ids) partial_tokens += utf8::is_valid(trained().token_bytes(id)) ? 0 : 1;
  ASSERT_GT(partial_tokens, 10);

  IncrementalDetokenizer detokenizer(trained());
  std::string streamed;
  int held = 0;
  for (int32_t id : ids) {
    const std::string piece = detokenizer.push(id);
    EXPECT_TRUE(utf8::is_valid(piece)) << "partial UTF-8 emitted after id " << id;
    EXPECT_EQ(piece.find(kFffd), std::string::npos);
    held += detokenizer.pending_bytes() > 0 ? 1 : 0;
    streamed += piece;
  }
  EXPECT_GT(held, 0);
  EXPECT_EQ(detokenizer.flush(), "");
  EXPECT_EQ(streamed, trained().decode(ids));
  EXPECT_EQ(streamed, text);
}

TEST(IncrementalDetokenizer, HoldsBytesUntilTheCharacterIsComplete) {
  IncrementalDetokenizer detokenizer(trained());
  // Byte tokens have their byte's id in the trained tokenizer; 👍 is F0 9F 91 8D.
  EXPECT_EQ(detokenizer.push(0xF0), "");
  EXPECT_EQ(detokenizer.push(0x9F), "");
  EXPECT_EQ(detokenizer.push(0x91), "");
  EXPECT_EQ(detokenizer.pending_bytes(), 3u);
  EXPECT_EQ(detokenizer.push(0x8D), "\xF0\x9F\x91\x8D");
  EXPECT_EQ(detokenizer.pending_bytes(), 0u);
}

TEST(IncrementalDetokenizer, InvalidBytesBecomeReplacementOnceCertain) {
  IncrementalDetokenizer detokenizer(trained());
  EXPECT_EQ(detokenizer.push(0xF0), "");
  EXPECT_EQ(detokenizer.push(0x9F), "");
  EXPECT_EQ(detokenizer.push('A'), kFffd + "A");  // 'A' cannot continue F0 9F
  EXPECT_EQ(detokenizer.push(0x80), kFffd);       // a lone continuation byte, at once
  EXPECT_EQ(detokenizer.push(0xE0), "");
  EXPECT_EQ(detokenizer.push(0x80), kFffd + kFffd);  // E0 must be followed by A0..BF
  EXPECT_EQ(detokenizer.push(0xC3), "");
  EXPECT_EQ(detokenizer.flush(), kFffd);  // the stream ended inside a character
  EXPECT_EQ(detokenizer.push('x'), "x");  // usable again after flush
}

TEST(IncrementalDetokenizer, SpecialTokensAndSkipping) {
  const int32_t eos = *trained().token_id("[e~[");
  const std::vector<int32_t> ids = {0xF0, 0x9F, eos, 0x91, 0x8D, 'z'};
  for (bool skip : {false, true}) {
    IncrementalDetokenizer detokenizer(trained(), skip);
    std::string streamed;
    for (int32_t id : ids) streamed += detokenizer.push(id);
    streamed += detokenizer.flush();
    EXPECT_EQ(streamed, trained().decode(ids, skip));
    // Skipped, the special no longer separates the bytes, so the emoji is whole.
    EXPECT_EQ(streamed, skip ? "\xF0\x9F\x91\x8Dz" : kFffd + "[e~[" + kFffd + kFffd + "z");
  }
}

TEST(IncrementalDetokenizer, UnknownIdsProduceNothing) {
  IncrementalDetokenizer detokenizer(trained());
  EXPECT_EQ(detokenizer.push(-1), "");
  EXPECT_EQ(detokenizer.push(trained().vocab_size() + 7), "");
  EXPECT_EQ(detokenizer.push('k'), "k");
}

}  // namespace
}  // namespace minimax
