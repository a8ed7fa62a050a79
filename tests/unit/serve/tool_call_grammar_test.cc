// Tool-call grammars (tool_choice required / named): every block the grammar produces, in both
// MiniMax formats, parses through the server's own tool parser into calls of the allowed tools
// whose arguments validate against the tool's parameter schema.
#include "serve/tool_call_grammar.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "schema_samples.h"
#include "serve/json_schema_grammar.h"
#include "serve/parse_pipeline.h"

namespace minimax {
namespace {

using testing::OJson;

const OJson& tools() {
  static const OJson t = OJson::parse(R"([
    {"type":"function","function":{"name":"get_price","parameters":{"type":"object",
      "properties":{
        "ticker":{"type":"string","pattern":"^[A-Z]{1,4}$"},
        "currency":{"enum":["EUR","USD"]},
        "days":{"type":"integer","minimum":1},
        "note":{"type":["string","null"]},
        "window":{"type":"object","properties":{"from":{"type":"string","format":"date"},
                                                 "to":{"type":"number"}},"required":["from"]},
        "tags":{"type":"array","items":{"type":"boolean"},"maxItems":2}},
      "required":["ticker","days"]}}},
    {"type":"function","function":{"name":"say\"hi","parameters":{"type":"object",
      "properties":{"text":{"type":"string"}},"required":["text"]}}},
    {"type":"function","function":{"name":"ping"}}
  ])");
  return t;
}

const OJson* parameters_of(const std::string& name) {
  for (const OJson& tool : tools())
    if (tool["function"]["name"] == name)
      return tool["function"].contains("parameters") ? &tool["function"]["parameters"] : nullptr;
  return nullptr;
}

ParserOptions options_for(ParserFormat format) {
  ParserOptions options;
  options.format = format;
  options.initial = ReasoningState::kContent;
  options.tools = nlohmann::json::parse(tools().dump());
  options.id_seed = 1;
  return options;
}

void expect_sentences_parse(ParserFormat format, std::string_view only_tool, bool parallel) {
  auto grammar =
      std::make_shared<const Grammar>(tool_call_grammar(format, tools(), only_tool, parallel));
  GrammarAutomaton automaton(grammar);
  std::mt19937 rng(format == ParserFormat::kMinimaxM2 ? 2 : 3);
  int parsed = 0, several = 0;
  for (int k = 0; k < 150; ++k) {
    const std::optional<std::string> text =
        testing::random_sentence(automaton, rng, grammar->markers, 3000);
    if (!text) continue;
    SCOPED_TRACE(*text);
    const ParseResult r = parse_output(*text, options_for(format));
    ASSERT_FALSE(r.tool_calls.empty());
    EXPECT_FALSE(r.content.has_value());
    if (!parallel) {
      EXPECT_EQ(r.tool_calls.size(), 1u);
    }
    several += r.tool_calls.size() > 1;
    for (const ToolCall& call : r.tool_calls) {
      if (!only_tool.empty()) {
        EXPECT_EQ(call.name, only_tool);
      }
      const OJson arguments = OJson::parse(call.arguments);
      const OJson* schema = parameters_of(call.name);
      if (!schema) {
        EXPECT_EQ(call.name, "ping");
        EXPECT_EQ(arguments, OJson::object());
        continue;
      }
      EXPECT_TRUE(testing::validates(arguments, *schema, *schema)) << arguments.dump();
    }
    ++parsed;
  }
  EXPECT_GT(parsed, 100);
  if (parallel) {
    EXPECT_GT(several, 5);
  }
}

TEST(ToolCallGrammar, M2RequiredCallsParseAndValidate) {
  expect_sentences_parse(ParserFormat::kMinimaxM2, "", true);
}
TEST(ToolCallGrammar, M3RequiredCallsParseAndValidate) {
  expect_sentences_parse(ParserFormat::kMinimaxM3, "", true);
}
TEST(ToolCallGrammar, NamedToolIsTheOnlyCall) {
  expect_sentences_parse(ParserFormat::kMinimaxM2, "get_price", false);
  expect_sentences_parse(ParserFormat::kMinimaxM3, "get_price", false);
}
TEST(ToolCallGrammar, NameWithAQuoteRoundTrips) {
  expect_sentences_parse(ParserFormat::kMinimaxM2, "say\"hi", false);
  expect_sentences_parse(ParserFormat::kMinimaxM3, "say\"hi", false);
}

TEST(ToolCallGrammar, RefusalsNameTheToolField) {
  auto path_of = [](const OJson& tools, ParserFormat format) -> std::string {
    try {
      tool_call_grammar(format, tools, "", true);
    } catch (const SchemaError& e) {
      return e.path();
    }
    return "(accepted)";
  };
  EXPECT_EQ(path_of(OJson::parse(R"([{"type":"function","function":{"name":"a>b"}}])"),
                    ParserFormat::kMinimaxM2),
            "tools[0].function.name");
  EXPECT_EQ(path_of(OJson::parse(R"([{"type":"function","function":{"name":"f","parameters":
                        {"type":"object","properties":{"x":{"type":"integer","maximum":2}}}}}])"),
                    ParserFormat::kMinimaxM3),
            "tools[0].function.parameters.properties.x.maximum");
  EXPECT_EQ(path_of(OJson::parse(R"([{"type":"function","function":{"name":"f","parameters":
                        {"type":"object","properties":{"a b":{"type":"string"}}}}}])"),
                    ParserFormat::kMinimaxM3),
            "tools[0].function.parameters.properties.a b");
}

}  // namespace
}  // namespace minimax
