// The tool-call opening the server forces for tool_choice required / named: the model's
// continuation after it must parse as exactly one call of the named tool, in both formats.
#include <gtest/gtest.h>

#include "serve/parse_pipeline.h"
#include "serve/parser_format.h"

namespace minimax {
namespace {

ParserOptions content_options(ParserFormat format) {
  ParserOptions options;
  options.format = format;
  options.initial = ReasoningState::kContent;
  options.tools = nlohmann::json::parse(
      R"([{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
          "properties":{"city":{"type":"string"}}}}}])");
  options.id_seed = 1;
  return options;
}

TEST(ForcedToolPrefix, M2NamedPrefixPlusContinuationIsOneCall) {
  const std::string prefix = forced_tool_call_prefix(ParserFormat::kMinimaxM2, "get_weather");
  EXPECT_EQ(prefix, "<minimax:tool_call>\n<invoke name=\"get_weather\">");
  const ParseResult r = parse_output(
      prefix + "\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n</minimax:tool_call>",
      content_options(ParserFormat::kMinimaxM2));
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "get_weather");
  EXPECT_EQ(nlohmann::json::parse(r.tool_calls[0].arguments)["city"], "Paris");
  EXPECT_FALSE(r.content.has_value());
}

TEST(ForcedToolPrefix, M3RequiredPrefixLeavesTheNameToTheModel) {
  const std::string ns = "]<]minimax[>[";
  const std::string prefix = forced_tool_call_prefix(ParserFormat::kMinimaxM3, "");
  EXPECT_EQ(prefix, ns + "<tool_call>\n" + ns + "<invoke name=\"");
  const ParseResult r = parse_output(prefix + "get_weather\">" + ns + "<city>Oslo" + ns +
                                         "</city>" + ns + "</invoke>\n" + ns + "</tool_call>",
                                     content_options(ParserFormat::kMinimaxM3));
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "get_weather");
  EXPECT_EQ(nlohmann::json::parse(r.tool_calls[0].arguments)["city"], "Oslo");
}

}  // namespace
}  // namespace minimax
