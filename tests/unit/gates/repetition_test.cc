// The greedy-loop detector: stuck tails are caught, ordinary answers pass.
#include "gates/repetition.h"

#include <gtest/gtest.h>

namespace minimax::gates {
namespace {

std::vector<std::string> repeat(const std::vector<std::string>& unit, size_t times,
                                std::vector<std::string> prefix = {}) {
  for (size_t i = 0; i < times; ++i) prefix.insert(prefix.end(), unit.begin(), unit.end());
  return prefix;
}

TEST(Loops, SingleTokenRunIsCaught) {
  const auto tokens = repeat({"ha"}, 30, {"The", " answer", " is"});
  const auto loop = find_tail_loop(tokens, false, LoopParams{});
  ASSERT_TRUE(loop.has_value());
  EXPECT_EQ(loop->period, 1u);
  EXPECT_EQ(loop->repeats, 30u);
  EXPECT_EQ(loop->unit, "ha");
}

TEST(Loops, PhraseLoopIsCaughtWithItsSmallestPeriod) {
  const auto tokens = repeat({" the", " bird", " sings", "."}, 8, {"Hello", ","});
  const auto loop = find_tail_loop(tokens, false, LoopParams{});
  ASSERT_TRUE(loop.has_value());
  EXPECT_EQ(loop->period, 4u);
  EXPECT_EQ(loop->repeats, 8u);
  EXPECT_EQ(loop->unit, " the bird sings.");
}

TEST(Loops, PartialLastUnitStillCounts) {
  auto tokens = repeat({"a", "b", "c"}, 9);
  tokens.push_back("a");  // cut mid-unit, as a max_tokens stop does
  const auto loop = find_tail_loop(tokens, false, LoopParams{});
  ASSERT_TRUE(loop.has_value());
  EXPECT_EQ(loop->period, 3u);
  EXPECT_EQ(loop->repeats, 9u);
}

TEST(Loops, NormalAnswersPass) {
  const std::vector<std::string> reasoning = {
      "<mm:think>", "7", "+", "5", "+", "0",           "=",   "12",  ",", " 4",
      "+",          "9", "+", "1", "=", "14",          ",",   " 0",  "+", "1",
      "+",          "1", "=", "2", ".", "</mm:think>", "242", "[e~["};
  EXPECT_FALSE(find_tail_loop(reasoning, false, LoopParams{}).has_value());
  // A short legitimate repetition ("1000000") is under the span.
  EXPECT_FALSE(find_tail_loop(repeat({"0"}, 6, {"1"}), false, LoopParams{}).has_value());
  // A copy answer that repeats a word a few times is not a loop.
  EXPECT_FALSE(
      find_tail_loop(repeat({" the", " bird"}, 3, {"Repeat"}), false, LoopParams{}).has_value());
  EXPECT_FALSE(find_tail_loop({}, false, LoopParams{}).has_value());
  EXPECT_FALSE(find_tail_loop({"x"}, true, LoopParams{}).has_value());
}

TEST(Loops, HittingMaxTokensLowersTheBar) {
  // 2 x 10 tokens: not a loop for a reply that stopped by itself, a loop when it hit the limit.
  const std::vector<std::string> unit = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
  const auto tokens = repeat(unit, 2, {"start"});
  EXPECT_FALSE(find_tail_loop(tokens, false, LoopParams{}).has_value());
  const auto loop = find_tail_loop(tokens, true, LoopParams{});
  ASSERT_TRUE(loop.has_value());
  EXPECT_EQ(loop->period, 10u);
  EXPECT_EQ(loop->repeats, 2u);
}

TEST(Loops, ParamsAreHonoured) {
  LoopParams strict;
  strict.min_repeats = 10;
  strict.min_span = 10;
  const auto tokens = repeat({"x", "y"}, 6);
  EXPECT_FALSE(find_tail_loop(tokens, false, strict).has_value());
  LoopParams loose;
  loose.min_repeats = 3;
  loose.min_span = 6;
  EXPECT_TRUE(find_tail_loop(tokens, false, loose).has_value());
}

TEST(Utf8Characters, SplitsMultiByteCharacters) {
  const auto chars = utf8_characters("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z");
  ASSERT_EQ(chars.size(), 5u);
  EXPECT_EQ(chars[1], "\xC3\xA9");
  EXPECT_EQ(chars[2], "\xE2\x82\xAC");
  EXPECT_EQ(chars[3], "\xF0\x9F\x98\x80");
}

}  // namespace
}  // namespace minimax::gates
