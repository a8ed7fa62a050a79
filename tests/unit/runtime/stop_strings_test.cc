// Stop strings over streamed pieces.
#include "runtime/stop_strings.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace minimax {
namespace {

TEST(PartialMatch, LongestSuffixThatStartsTheNeedle) {
  EXPECT_EQ(partial_match_length("Hello wo", "world"), 2u);
  EXPECT_EQ(partial_match_length("Hello", "world"), 0u);
  EXPECT_EQ(partial_match_length("abab", "abac"), 2u);
  EXPECT_EQ(partial_match_length("xaba", "abac"), 3u);
  EXPECT_EQ(partial_match_length("world", "world"), 0u);  // proper prefixes only
  EXPECT_EQ(partial_match_length("", "x"), 0u);
}

// Feeds `pieces` and returns (released text, whether stopped, matched string).
struct StopOutcome {
  std::string text;
  bool stopped = false;
  std::string matched;
};
StopOutcome feed(std::vector<std::string> stops, std::vector<std::string> pieces) {
  StopStringMatcher m(std::move(stops));
  StopOutcome out;
  for (const std::string& piece : pieces) {
    auto step = m.push(piece);
    out.text += step.text;
    if (step.stopped) {
      out.stopped = true;
      out.matched = step.matched;
    }
  }
  out.text += m.flush();
  return out;
}

TEST(StopStringMatcherTest, FindsAStopSpanningPiecesAndHidesIt) {
  const StopOutcome o = feed({"lo wo"}, {"Hel", "lo", " wo", "rld"});
  EXPECT_TRUE(o.stopped);
  EXPECT_EQ(o.text, "Hel");
  EXPECT_EQ(o.matched, "lo wo");
}

TEST(StopStringMatcherTest, ReleasesTextAsSoonAsItCannotStartAStop) {
  StopStringMatcher m({"STOP"});
  EXPECT_EQ(m.push("abc S").text, "abc ");  // "S" may begin STOP
  EXPECT_EQ(m.push("T").text, "");
  EXPECT_EQ(m.push("x").text, "STx");  // it did not
  EXPECT_EQ(m.push("yST").text, "y");
  const auto step = m.push("OPzz");
  EXPECT_TRUE(step.stopped);
  EXPECT_EQ(step.text, "");
  EXPECT_EQ(m.push("more").text, "");  // nothing after a stop
  EXPECT_EQ(m.flush(), "");
}

TEST(StopStringMatcherTest, EarliestStopWinsAndHeldTextIsFlushed) {
  EXPECT_EQ(feed({"cd", "b"}, {"abcd"}).matched, "b");
  EXPECT_EQ(feed({"cd", "b"}, {"abcd"}).text, "a");
  const StopOutcome o = feed({"xyz"}, {"ab", "xy"});
  EXPECT_FALSE(o.stopped);
  EXPECT_EQ(o.text, "abxy");
  EXPECT_EQ(feed({}, {"a", "b"}).text, "ab");
}

TEST(StopStringMatcherTest, MultiByteStops) {
  const StopOutcome o = feed({"é!"}, {"caf", "é", "!", "x"});
  EXPECT_TRUE(o.stopped);
  EXPECT_EQ(o.text, "caf");
}

TEST(StopStringMatcherTest, RejectsEmptyAndInvalidStops) {
  EXPECT_THROW(StopStringMatcher({""}), Error);
  EXPECT_THROW(StopStringMatcher({std::string("\xC3")}), Error);
}

}  // namespace
}  // namespace minimax
