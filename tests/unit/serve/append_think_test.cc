// --reasoning-parser minimax_m2_append_think (vLLM's): no split, the whole output is content, and
// the first delta starts with the <think> the prompt opened, so that content holds the whole
// <think>...</think> block; tool calls are still parsed.
#include <gtest/gtest.h>

#include "serve/parse_pipeline.h"

namespace minimax {
namespace {

ParserOptions append_think_options(bool tools) {
  ParserOptions options;
  options.format = ParserFormat::kMinimaxM2;
  options.parse_reasoning = false;
  options.append_think = true;
  options.parse_tool_calls = tools;
  options.initial = ReasoningState::kContent;
  options.id_seed = 1;
  return options;
}

TEST(AppendThink, TheWholeOutputIsContentAfterAnOpeningThink) {
  const ParseResult r =
      parse_output("I should greet.\n</think>\n\nHello!", append_think_options(false));
  EXPECT_FALSE(r.reasoning.has_value());
  EXPECT_EQ(r.content.value_or(""), "<think>I should greet.\n</think>\n\nHello!");
}

TEST(AppendThink, StreamedTheFirstDeltaCarriesTheThinkOnce) {
  ParsePipeline pipeline(append_think_options(false));
  const ParseDelta first = pipeline.push_text("Hmm");
  const ParseDelta second = pipeline.push_text(" ok</think>done");
  pipeline.finish();
  EXPECT_EQ(first.content, "<think>Hmm");
  EXPECT_EQ(second.content.find("<think>"), std::string::npos);
  EXPECT_EQ(pipeline.result().content.value_or(""), "<think>Hmm ok</think>done");
}

TEST(AppendThink, ToolCallsAreStillParsed) {
  const ParseResult r = parse_output(
      "plan</think>\n<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"x\">1"
      "</parameter>\n</invoke>\n</minimax:tool_call>",
      append_think_options(true));
  ASSERT_EQ(r.tool_calls.size(), 1u);
  EXPECT_EQ(r.tool_calls[0].name, "f");
  EXPECT_EQ(r.content.value_or("").rfind("<think>plan</think>", 0), 0u);
}

TEST(AppendThink, PlainM2ParserSplitsInstead) {
  ParserOptions options = append_think_options(false);
  options.parse_reasoning = true;
  options.initial = ReasoningState::kReasoning;
  const ParseResult r = parse_output("I should greet.</think>Hello!", options);
  EXPECT_EQ(r.reasoning.value_or(""), "I should greet.");
  EXPECT_EQ(r.content.value_or(""), "Hello!");
}

}  // namespace
}  // namespace minimax
