// The M3 tool-call parser through the pipeline (reasoning off): nested objects and arrays typed by
// nested schemas, untyped structure, empty elements, verbatim string leaves, and malformed markup
// returned as content.
#include <gtest/gtest.h>

#include "parser_test_helpers.h"

namespace minimax {
namespace {

using parser_test::options_for;
using parser_test::parse_chunks;

using parser_test::kNs;

std::string el(const std::string& tag, const std::string& inner) {
  return kNs + "<" + tag + ">" + inner + kNs + "</" + tag + ">";
}
std::string block(const std::string& name, const std::string& body) {
  return kNs + "<tool_call>\n" + kNs + "<invoke name=\"" + name + "\">" + body + kNs +
         "</invoke>\n" + kNs + "</tool_call>";
}

ParserOptions m3_tool_options(nlohmann::json tools = nullptr) {
  ParserOptions options =
      options_for(ParserFormat::kMinimaxM3, ReasoningState::kContent, std::move(tools));
  options.parse_reasoning = false;
  return options;
}

nlohmann::json tool(const char* name, const char* parameters) {
  return nlohmann::json::array(
      {{{"type", "function"},
        {"function", {{"name", name}, {"parameters", nlohmann::json::parse(parameters)}}}}});
}

std::string only_arguments(const ParseResult& result) {
  EXPECT_EQ(result.tool_calls.size(), 1u) << parser_test::to_json(result);
  return result.tool_calls.empty() ? "" : result.tool_calls[0].arguments;
}

TEST(M3ToolCalls, NestedSchemaTypesEveryLevel) {
  const auto tools = tool("f", R"({"type": "object", "properties": {
      "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
      "meta": {"type": "object", "additionalProperties": {"type": "boolean"}},
      "maybe": {"anyOf": [{"type": "null"}, {"type": "object",
                           "properties": {"n": {"type": "number"}}}]}}})");
  const std::string body =
      el("matrix", el("item", el("item", "1") + el("item", "02")) + el("item", el("item", "3"))) +
      el("meta", el("x", "yes") + el("y", "0")) + el("maybe", el("n", "2.50"));
  EXPECT_EQ(only_arguments(parse_output(block("f", body), m3_tool_options(tools))),
            R"({"matrix":[[1,2],[3]],"meta":{"x":true,"y":false},"maybe":{"n":2.5}})");
}

TEST(M3ToolCalls, EmptyElementsFollowTheSchema) {
  const auto tools = tool("f", R"({"type": "object", "properties": {
      "o": {"type": "object"}, "a": {"type": "array"}, "s": {"type": "string"},
      "n": {"type": ["integer", "null"]}}})");
  const std::string body = el("o", "") + el("a", "") + el("s", "") + el("n", "") + el("u", "");
  EXPECT_EQ(only_arguments(parse_output(block("f", body), m3_tool_options(tools))),
            R"({"o":{},"a":[],"s":"","n":null,"u":""})");
}

TEST(M3ToolCalls, LeavesVerbatimForStringsTrimmedOtherwise) {
  const auto tools = tool("f", R"({"type": "object", "properties": {
      "s": {"type": "string"}, "i": {"type": "integer"}}})");
  // "u" is not declared: it stays the text as written (vLLM), spacing included.
  const std::string body = el("s", "\n  <p>x</p> \n") + el("i", "\n 7 \n") + el("u", " 8 ");
  EXPECT_EQ(only_arguments(parse_output(block("f", body), m3_tool_options(tools))),
            R"({"s":"\n  <p>x</p> \n","i":7,"u":" 8 "})");
}

TEST(M3ToolCalls, UntypedStructure) {
  // No schema: <item> children make an array, other children an object, repeats a list; the
  // leaves stay strings (vLLM: "1" is not turned into 1 without a schema saying so).
  const std::string body = el("list", el("item", "a") + el("item", "1")) +
                           el("obj", el("k", "v") + el("k", "w") + el("z", "true")) +
                           el("mixed", el("item", "a") + el("other", "b"));
  EXPECT_EQ(
      only_arguments(parse_output(block("f", body), m3_tool_options())),
      R"({"list":["a","1"],"obj":{"k":["v","w"],"z":"true"},"mixed":{"item":"a","other":"b"}})");
}

TEST(M3ToolCalls, ArraySchemaTakesAnyChildTag) {
  const auto tools = tool("f", R"({"type": "object", "properties": {"ids": {"type": "array",
                                                               "items": {"type": "integer"}}}})");
  EXPECT_EQ(only_arguments(parse_output(block("f", el("ids", el("id", "1") + el("id", "2"))),
                                        m3_tool_options(tools))),
            R"({"ids":[1,2]})");
}

TEST(M3ToolCalls, TwoInvokesAndTwoBlocks) {
  const std::string text = "a" + block("f", el("x", "1")) + "b" + block("g", "") + "c";
  const ParseResult result = parse_output(text, m3_tool_options());
  EXPECT_EQ(result.content, "abc");
  ASSERT_EQ(result.tool_calls.size(), 2u);
  EXPECT_EQ(result.tool_calls[0].name, "f");
  EXPECT_EQ(result.tool_calls[1].name, "g");
  EXPECT_EQ(result.tool_calls[1].arguments, "{}");
}

TEST(M3ToolCalls, NestingDeeperThanTheLimitIsMalformed) {
  std::string deep = "v";
  for (int i = 0; i < 70; ++i) deep = el("d", deep);
  const std::string text = block("f", deep);
  const ParseResult result = parse_output(text, m3_tool_options());
  EXPECT_TRUE(result.tool_calls.empty());
  EXPECT_EQ(result.content, text);
  std::string ok = "v";
  for (int i = 0; i < 60; ++i) ok = el("d", ok);
  EXPECT_EQ(parse_output(block("f", ok), m3_tool_options()).tool_calls.size(), 1u);
}

class M3Malformed : public ::testing::TestWithParam<std::string> {};

TEST_P(M3Malformed, IsContentWithNoTextLost) {
  const std::string& text = GetParam();
  for (const auto& chunks : parser_test::chunkings(text, 5)) {
    const ParseResult result = parse_chunks(chunks, m3_tool_options());
    EXPECT_EQ(result.content, text);
    EXPECT_TRUE(result.tool_calls.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, M3Malformed,
    ::testing::Values(
        kNs + "<tool_call>", kNs + "<tool_call>\n" + kNs + "<invoke name=\"f\">",
        kNs + "<tool_call>stray" + kNs + "</tool_call>",
        kNs + "<tool_call>" + kNs + "<invoke>" + kNs + "</invoke>" + kNs + "</tool_call>",
        block("f", el("a", "1") + "text"), block("f", "text" + el("a", "1")),
        block("f", kNs + "<a>1" + kNs + "</b>"),
        block("f", kNs + "<a>x" + el("b", "1") + kNs + "</a>"),
        block("f", el("a", el("b", "1") + "tail")), block("f", kNs + "</a>"),
        block("f", kNs + "<a b>1" + kNs + "</a b>"), block("f", kNs + "<a>1" + kNs + "</invoke>"),
        block("f", el("a", "1") + kNs + "oops"), block("f", el("a", "1") + "<mm:think>"),
        kNs + "<tool_call>" + kNs + "<invoke name=\"f\">" + el("a", "1") + kNs + "</tool_call>",
        "x" + kNs + " <tool_cal", kNs + "<tool_call>" + kNs + "<invoke name=\"f\"" + kNs,
        kNs + kNs + "<x>"));

TEST(M3ToolCalls, CommittedCallSurvivesALaterFailure) {
  const std::string bad =
      "\n" + kNs + "<invoke name=\"g\">oops" + kNs + "</invoke>\n" + kNs + "</tool_call>";
  const std::string text = kNs + "<tool_call>\n" + kNs + "<invoke name=\"f\">" + el("a", "1") +
                           kNs + "</invoke>" + bad + "after";
  const ParseResult result = parse_output(text, m3_tool_options());
  ASSERT_EQ(result.tool_calls.size(), 1u);
  EXPECT_EQ(result.tool_calls[0].arguments, R"({"a":"1"})");
  EXPECT_EQ(result.content, bad + "after");
}

}  // namespace
}  // namespace minimax
