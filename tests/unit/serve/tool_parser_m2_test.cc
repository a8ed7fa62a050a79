// The M2 tool-call parser through the pipeline (reasoning off, so the text is all content):
// several invokes and blocks, emission when an invoke completes, ids, the exact arguments text,
// and malformed markup that must come back as content byte for byte.
#include <gtest/gtest.h>

#include <regex>

#include "parser_test_helpers.h"
#include "serve/tool_parser.h"

namespace minimax {
namespace {

using parser_test::options_for;
using parser_test::parse_chunks;

ParserOptions m2_options(nlohmann::json tools = nullptr) {
  ParserOptions options =
      options_for(ParserFormat::kMinimaxM2, ReasoningState::kContent, std::move(tools));
  options.parse_reasoning = false;
  return options;
}

const nlohmann::json kTools = nlohmann::json::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}])");

TEST(M2ToolCalls, InvokesAcrossBlocksInOrder) {
  const ParseResult result = parse_output(
      "A<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Oslo"
      "</parameter>\n<parameter name=\"days\"> 2 </parameter>\n</invoke>\n<invoke name="
      "\"get_weather\"><parameter name=\"city\">Rome</parameter></invoke>\n</minimax:tool_call>B"
      "<minimax:tool_call><invoke name=\"other\"></invoke></minimax:tool_call>C",
      m2_options(kTools));
  EXPECT_EQ(result.content, "ABC");
  ASSERT_EQ(result.tool_calls.size(), 3u);
  EXPECT_EQ(result.tool_calls[0].name, "get_weather");
  EXPECT_EQ(result.tool_calls[0].arguments, R"({"city":"Oslo","days":2})");
  EXPECT_EQ(result.tool_calls[1].arguments, R"({"city":"Rome"})");
  EXPECT_EQ(result.tool_calls[2].name, "other");
  EXPECT_EQ(result.tool_calls[2].arguments, "{}");
}

TEST(M2ToolCalls, RepeatedParameterKeepsPlaceTakesLastValue) {
  const ParseResult result = parse_output(
      "<minimax:tool_call><invoke name=\"f\"><parameter name=\"a\">1</parameter><parameter "
      "name=\"b\">x</parameter><parameter name=\"a\">2</parameter></invoke></minimax:tool_call>",
      m2_options());
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].arguments, R"({"a":"2","b":"x"})");  // no schema: strings
}

TEST(M2ToolCalls, ArgumentsTextIsCompactUtf8) {
  const ParseResult result = parse_output(
      "<minimax:tool_call><invoke name=\"say\"><parameter name=\"text\">\xE4\xBD\xA0\xE5\xA5\xBD "
      "\"q\" \\ \n tab\t</parameter></invoke></minimax:tool_call>",
      m2_options());
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].arguments,
            "{\"text\":\"\xE4\xBD\xA0\xE5\xA5\xBD \\\"q\\\" \\\\ \\n tab\"}");
}

TEST(M2ToolCalls, MarkersInsideValuesAreText) {
  const ParseResult result = parse_output(
      "<minimax:tool_call><invoke name=\"f\"><parameter name=\"t\">a<think>b</think>c"
      "<minimax:tool_call></parameter></invoke></minimax:tool_call>",
      m2_options());
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].arguments, R"({"t":"a<think>b</think>c<minimax:tool_call>"})");
}

TEST(M2ToolCalls, CallIsEmittedWhenItsInvokeCompletes) {
  ParsePipeline pipeline(m2_options(kTools));
  EXPECT_EQ(pipeline.push_text("Sure.\n").content, "Sure.\n");
  ParseDelta delta = pipeline.push_text("<minimax:tool_call>\n<invoke name=\"get_weather\">");
  EXPECT_TRUE(delta.empty());
  delta = pipeline.push_text("<parameter name=\"days\">3</parameter>\n</invo");
  EXPECT_TRUE(delta.empty());
  delta = pipeline.push_text("ke>\n");
  ASSERT_EQ(delta.tool_calls.size(), 1u);
  EXPECT_EQ(delta.tool_calls[0].index, 0);
  EXPECT_EQ(delta.tool_calls[0].name, "get_weather");
  EXPECT_EQ(delta.tool_calls[0].arguments, R"({"days":3})");
  EXPECT_TRUE(std::regex_match(delta.tool_calls[0].id, std::regex("call_[0-9a-f]{24}")))
      << delta.tool_calls[0].id;
  EXPECT_TRUE(delta.content.empty());
  EXPECT_TRUE(pipeline.push_text("</minimax:tool_call>").empty());
  EXPECT_TRUE(pipeline.finish().empty());
}

TEST(M2ToolCalls, IdsAreSeededOrRandom) {
  const std::string two =
      "<minimax:tool_call><invoke name=\"f\"></invoke><invoke name=\"f\"></invoke>"
      "</minimax:tool_call>";
  const ParseResult a = parse_output(two, m2_options());
  const ParseResult b = parse_output(two, m2_options());
  ASSERT_EQ(a.tool_calls.size(), 2u);
  EXPECT_EQ(a.tool_calls[0].id, b.tool_calls[0].id);  // same seed, same ids
  EXPECT_NE(a.tool_calls[0].id, a.tool_calls[1].id);
  ParserOptions unseeded = m2_options();
  unseeded.id_seed.reset();
  const ParseResult c = parse_output(two, unseeded);
  const ParseResult d = parse_output(two, unseeded);
  EXPECT_NE(c.tool_calls[0].id, d.tool_calls[0].id);
  EXPECT_TRUE(std::regex_match(c.tool_calls[1].id, std::regex("call_[0-9a-f]{24}")));
}

TEST(M2ToolCalls, StrayTextInABlockStreamsAsContentAtOnce) {
  ParsePipeline pipeline(m2_options());
  EXPECT_EQ(pipeline.push_text("<minimax:tool_call>\nSorry,").content,
            "<minimax:tool_call>\nSorry,");
  EXPECT_EQ(pipeline.push_text(" no.</minimax:tool_call> ok").content,
            " no.</minimax:tool_call> ok");
}

TEST(M2ToolCalls, OverlongTagFailsWithoutWaitingForTheEnd) {
  ParsePipeline pipeline(m2_options());
  const std::string open = "<minimax:tool_call><invoke name=\"" + std::string(2000, 'a');
  EXPECT_EQ(pipeline.push_text(open).content, open);
}

TEST(M2ToolCalls, ToolParsingOffKeepsMarkup) {
  ParserOptions options = m2_options();
  options.parse_tool_calls = false;
  const std::string text = "x<minimax:tool_call><invoke name=\"f\"></invoke></minimax:tool_call>";
  const ParseResult result = parse_output(text, options);
  EXPECT_EQ(result.content, text);
  EXPECT_TRUE(result.tool_calls.empty());
}

class M2Malformed : public ::testing::TestWithParam<std::string> {};

// Every input is markup that does not complete a call: all of it comes back as content.
TEST_P(M2Malformed, IsContentWithNoTextLost) {
  const std::string& text = GetParam();
  for (const auto& chunks : parser_test::chunkings(text, 5)) {
    const ParseResult result = parse_chunks(chunks, m2_options(kTools));
    EXPECT_EQ(result.content, text);
    EXPECT_TRUE(result.tool_calls.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, M2Malformed,
    ::testing::Values(
        "<minimax:tool_call>", "a<minimax:tool_call>\n", "<minimax:tool_call>\n<invoke",
        "<minimax:tool_call><invoke name=\"get_weather\"><parameter name=\"city\">Os",
        "<minimax:tool_call><invoke>x</invoke></minimax:tool_call>",
        "<minimax:tool_call><invoke name=\"\"></invoke></minimax:tool_call>",
        "<minimax:tool_call><invoke name=\"f\" extra></invoke></minimax:tool_call>",
        "<minimax:tool_call><invoke name=\"f></invoke></minimax:tool_call>",
        "<minimax:tool_call><invoke name=\"f\">text<parameter name=\"a\">1</parameter></invoke>"
        "</minimax:tool_call>",
        "<minimax:tool_call><invoke name=\"f\"><parameter name=\"a\">1</invoke>"
        "</minimax:tool_call>tail",
        "<minimax:tool_call><invoke name=\"f\"><parameter name=\"a\">1</parameter>"
        "</minimax:tool_call>",
        "<minimax:tool_call><invoke name=\"f\"><parameter>1</parameter></invoke>"
        "</minimax:tool_call>",
        "<minimax:tool_call><invokes name=\"f\"></invokes></minimax:tool_call>",
        "<minimax:tool_call><minimax:tool_call><invoke name=\"f\"></invoke></minimax:tool_call>",
        "<minimax:tool_call><invoke name=\"f\"><think></invoke></minimax:tool_call>",
        "</minimax:tool_call> stray close", "<invoke name=\"f\"></invoke> outside a block"));

TEST(NameAttribute, Forms) {
  EXPECT_EQ(parse_name_attribute(" name=\"get_weather\""), "get_weather");
  EXPECT_EQ(parse_name_attribute(" name='a b'"), "a b");
  EXPECT_EQ(parse_name_attribute(" name = plain "), "plain");
  EXPECT_EQ(parse_name_attribute(" name=\"x\" "), "x");
  EXPECT_EQ(parse_name_attribute(" name=\"x\" y=\"z\""), "");
  EXPECT_EQ(parse_name_attribute(" name=\"x"), "");
  EXPECT_EQ(parse_name_attribute(" name="), "");
  EXPECT_EQ(parse_name_attribute(" id=\"x\""), "");
  EXPECT_EQ(parse_name_attribute(" name=a b"), "");
}

}  // namespace
}  // namespace minimax
