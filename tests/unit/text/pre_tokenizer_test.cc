// Tests of the regex splits: the o200k pattern on hand-checked inputs, the five split behaviours,
// and the ByteLevel step.
#include "text/pre_tokenizer.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace minimax {
namespace {

using Words = std::vector<std::string>;

Words o200k(std::string_view text) {
  static const Regex regex(kO200kPattern, "test");
  return split_by_regex(text, regex, SplitBehavior::kIsolated, false);
}

TEST(O200kPattern, SplitsWordsContractionsAndCase) {
  EXPECT_EQ(o200k("I'LL don't"), (Words{"I'LL", " don't"}));
  EXPECT_EQ(o200k("HelloWorld"), (Words{"Hello", "World"}));
  EXPECT_EQ(o200k("camelCASE"), (Words{"camel", "CASE"}));
  EXPECT_EQ(o200k("they're"), (Words{"they're"}));
}

TEST(O200kPattern, SplitsDigitsInThrees) {
  EXPECT_EQ(o200k("1234567"), (Words{"123", "456", "7"}));
  EXPECT_EQ(o200k("a1"), (Words{"a", "1"}));
}

TEST(O200kPattern, KeepsTheLastSpaceForTheNextWord) {
  EXPECT_EQ(o200k("a    b"), (Words{"a", "   ", " b"}));
  EXPECT_EQ(o200k("x\r\n\r\ny"), (Words{"x", "\r\n\r\n", "y"}));
  EXPECT_EQ(o200k("end   "), (Words{"end", "   "}));
  EXPECT_EQ(o200k("\tif"), (Words{"\tif"}));  // one non-letter may lead a word
}

TEST(O200kPattern, PunctuationTakesTrailingNewlinesAndSlashes) {
  EXPECT_EQ(o200k("a.\n\nb"), (Words{"a", ".\n\n", "b"}));
  EXPECT_EQ(o200k(" ://x"), (Words{" ://", "x"}));
}

TEST(O200kPattern, HandlesNonLatinScriptsAndMarks) {
  EXPECT_EQ(o200k("中文 测试"), (Words{"中文", " 测试"}));
  EXPECT_EQ(o200k("Grüße"), (Words{"Grüße"}));
  EXPECT_EQ(o200k("e\u0301t\u00E9"), (Words{"e\u0301t\u00E9"}));  // a combining mark joins the word
}

TEST(SplitBehaviour, AllFiveOnDashes) {
  const Regex dash("-", "test");
  const std::string text = "a-b--c";
  EXPECT_EQ(split_by_regex(text, dash, SplitBehavior::kIsolated, false),
            (Words{"a", "-", "b", "-", "-", "c"}));
  EXPECT_EQ(split_by_regex(text, dash, SplitBehavior::kRemoved, false), (Words{"a", "b", "c"}));
  EXPECT_EQ(split_by_regex(text, dash, SplitBehavior::kMergedWithPrevious, false),
            (Words{"a-", "b-", "-", "c"}));
  EXPECT_EQ(split_by_regex(text, dash, SplitBehavior::kMergedWithNext, false),
            (Words{"a", "-b", "-", "-c"}));
  EXPECT_EQ(split_by_regex(text, dash, SplitBehavior::kContiguous, false),
            (Words{"a", "-", "b", "--", "c"}));
  // Inverted, the dashes are the kept (unmatched) pieces, each on its own.
  EXPECT_EQ(split_by_regex(text, dash, SplitBehavior::kRemoved, true), (Words{"-", "-", "-"}));
}

TEST(PreTokenizerJson, SequenceOfSplitAndByteLevel) {
  const nlohmann::json config = {
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "MergedWithNext"}},
        {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  const PreTokenizer pre = PreTokenizer::from_json(config, "test");
  EXPECT_TRUE(pre.has_byte_level());
  EXPECT_EQ(pre.split("hi there\n"), (Words{"hi", "Ġthere\xC4\x8A"}));
}

TEST(PreTokenizerJson, ByteLevelWithPrefixSpaceAndGpt2Regex) {
  const nlohmann::json config = {{"type", "ByteLevel"}, {"add_prefix_space", true}};
  const PreTokenizer pre = PreTokenizer::from_json(config, "test");
  EXPECT_EQ(pre.split("Hello world's"), (Words{"ĠHello", "Ġworld", "'s"}));
}

TEST(PreTokenizerJson, RegexMetacharactersInStringPatternsAreLiteral) {
  EXPECT_EQ(
      split_by_regex("a.b\\Ec", Regex(regex_escape("\\E"), "t"), SplitBehavior::kRemoved, false),
      (Words{"a.b", "c"}));
  EXPECT_EQ(split_by_regex("a.b", Regex(regex_escape("."), "t"), SplitBehavior::kRemoved, false),
            (Words{"a", "b"}));
}

TEST(PreTokenizerJson, ErrorsNameTheField) {
  const nlohmann::json bad_type = {{"type", "Sequence"},
                                   {"pretokenizers", {{{"type", "Whitespace"}}}}};
  try {
    PreTokenizer::from_json(bad_type, "f.json: pre_tokenizer");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f.json: pre_tokenizer.pretokenizers[0].type"),
              std::string::npos)
        << e.what();
  }
  const nlohmann::json bad_regex = {
      {"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
  try {
    PreTokenizer::from_json(bad_regex, "f.json: pre_tokenizer");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f.json: pre_tokenizer.pattern"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace minimax
