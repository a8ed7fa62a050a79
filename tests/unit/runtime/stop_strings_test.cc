// Stop strings over streamed pieces and the reasoning split at think markers.
#include "runtime/stop_strings.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "runtime/reasoning_split.h"

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
struct Outcome {
  std::string text;
  bool stopped = false;
  std::string matched;
};
Outcome feed(std::vector<std::string> stops, std::vector<std::string> pieces) {
  StopStringMatcher m(std::move(stops));
  Outcome out;
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
  const Outcome o = feed({"lo wo"}, {"Hel", "lo", " wo", "rld"});
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
  const Outcome o = feed({"xyz"}, {"ab", "xy"});
  EXPECT_FALSE(o.stopped);
  EXPECT_EQ(o.text, "abxy");
  EXPECT_EQ(feed({}, {"a", "b"}).text, "ab");
}

TEST(StopStringMatcherTest, MultiByteStops) {
  const Outcome o = feed({"é!"}, {"caf", "é", "!", "x"});
  EXPECT_TRUE(o.stopped);
  EXPECT_EQ(o.text, "caf");
}

TEST(StopStringMatcherTest, RejectsEmptyAndInvalidStops) {
  EXPECT_THROW(StopStringMatcher({""}), Error);
  EXPECT_THROW(StopStringMatcher({std::string("\xC3")}), Error);
}

std::string render(const std::vector<ReasoningSplitter::Piece>& pieces) {
  std::string out;
  for (const auto& p : pieces) out += (p.reasoning ? "R[" : "A[") + p.text + "]";
  return out;
}

TEST(ReasoningSplitterTest, StartsInReasoningWhenThePromptOpensIt) {
  const ThinkMarkers m2 = think_markers(Arch::kM2);
  EXPECT_TRUE(prompt_opens_reasoning("]~b]ai\n<think>\n", m2));
  EXPECT_FALSE(prompt_opens_reasoning("]~b]ai\n", m2));
  const ThinkMarkers m3 = think_markers(Arch::kM3);
  EXPECT_TRUE(prompt_opens_reasoning("]~b]ai\n<mm:think>", m3));
  EXPECT_FALSE(prompt_opens_reasoning("]~b]ai\n</mm:think>", m3));

  ReasoningSplitter s(m2, true);
  std::string out = render(s.push("plan it</th"));
  out += render(s.push("ink>\n\nThe answer"));
  out += render(s.flush());
  EXPECT_EQ(out, "R[plan it]A[\n\nThe answer]");
}

TEST(ReasoningSplitterTest, OpenMarkerInTheOutputAndMarkersSplitAcrossPieces) {
  ReasoningSplitter s(think_markers(Arch::kM3), false);
  std::string out;
  for (std::string piece : {"<mm:", "think>", "why", "</mm:", "think>", "so", " <mm"})
    out += render(s.push(piece));
  out += render(s.flush());
  EXPECT_EQ(out, "R[why]A[so]A[ ]A[<mm]");
}

}  // namespace
}  // namespace minimax
