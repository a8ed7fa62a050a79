// Reasoning parser: the start state from the generation prefix only (the prompt-scope bug of
// spec/parsers.md §2.6), the split rules of §2.5 for M2 and M3, incremental emission, and markers
// cut at every position.
#include "serve/reasoning_parser.h"

#include <gtest/gtest.h>

#include <utility>

#include "base/error.h"
#include "parser_test_helpers.h"
#include "serve/marked_text.h"
#include "serve/tool_call_grammar.h"
#include "serve/tool_parser.h"

namespace minimax {
namespace {

using parser_test::options_for;
using parser_test::parse_chunks;
constexpr auto kM2 = ParserFormat::kMinimaxM2;
constexpr auto kM3 = ParserFormat::kMinimaxM3;
constexpr auto kR = ReasoningState::kReasoning;
constexpr auto kC = ReasoningState::kContent;

// An M2 prompt whose earlier parts mention every marker: the tool-call example of the template's
// system block, and a history turn with reasoning and a real tool call.
const std::string kM2History =
    "]~!b[]~b]system\nYou are a helpful assistant.\n\n# Tools\n<tools>\n<tool>{\"name\": "
    "\"f\"}</tool>\n</tools>\n\nWhen making tool calls, use XML format:\n\n<minimax:tool_call>\n"
    "<invoke name=\"tool-name-1\">\n<parameter name=\"param-key-1\">param-value-1</parameter>\n"
    "</invoke>\n</minimax:tool_call>[e~[\n]~b]user\nhi[e~[\n]~b]ai\n<think>\nold reasoning\n"
    "</think>\n\n<minimax:tool_call>\n<invoke name=\"f\">\n</invoke>\n</minimax:tool_call>[e~[\n"
    "]~b]tool\n<response>ok</response>[e~[\n";
// The M3 system block's thinking instructions (spec/templates/minimax_m3_fragments.md).
const std::string kM3System =
    "]~!b[]~b]system\n<thinking_instructions>\nWhen thinking is enabled, wrap your reasoning in "
    "<mm:think></mm:think> tags before your response. When thinking is disabled, begin your "
    "response directly after the </mm:think> prefix.\n</thinking_instructions>[e~[\n]~b]developer\n"
    "You are a helpful assistant.[e~[\n]~b]user\nhi[e~[\n";

std::string marked(ParserFormat format, std::string_view text) {
  MarkerLexer lexer(parser_format_spec(format).markers);
  return lexer.push_text(text) + lexer.finish();
}

TEST(ReasoningStart, M2GenerationPrefixDecides) {
  const ThinkingMode mode = ThinkingMode::kEnabled;
  EXPECT_EQ(initial_reasoning_state(kM2History + "]~b]ai\n<think>\n", kM2, mode), kR);
  EXPECT_EQ(initial_reasoning_state(kM2History + "]~b]ai\n<think>\n</think>\n\n", kM2, mode), kC);
  // The trap is real: the whole prompt's last marker event is an end (a tool-call block after the
  // history's </think>), so a whole-prompt scan would start in content.
  EXPECT_EQ(state_after_prefix(marked(kM2, kM2History), kM2, mode), kC);
  EXPECT_EQ(state_after_prefix(marked(kM2, kM2History + "]~b]ai\n<think>\n"), kM2,
                               ThinkingMode::kDisabled),
            kR);
  // A prefilled partial answer (continue_final_message): the state where it stops.
  EXPECT_EQ(initial_reasoning_state(kM2History + "]~b]ai\n<think>\nx</think>\n\nSo", kM2, mode),
            kC);
  EXPECT_EQ(initial_reasoning_state(
                kM2History + "]~b]ai\n<think>\nx</think><minimax:tool_call>\n<invoke", kM2, mode),
            kC);
}

TEST(ReasoningStart, M3GenerationPrefixDecides) {
  const std::string prompt = kM3System + "]~b]ai\n";
  EXPECT_EQ(initial_reasoning_state(prompt + "<mm:think>", kM3, ThinkingMode::kAdaptive), kR);
  EXPECT_EQ(initial_reasoning_state(prompt + "</mm:think>", kM3, ThinkingMode::kEnabled), kC);
  // Adaptive: no prefix, the model decides (content unless it opens a marker).
  EXPECT_EQ(initial_reasoning_state(prompt, kM3, ThinkingMode::kAdaptive), kC);
  EXPECT_EQ(initial_reasoning_state(prompt, kM3, ThinkingMode::kEnabled), kR);
  // The system prose ends with </mm:think>: a whole-prompt scan says "ended".
  EXPECT_EQ(state_after_prefix(marked(kM3, prompt), kM3, ThinkingMode::kEnabled), kC);
}

TEST(ReasoningStart, WithoutHeaderTheModeDecides) {
  // vLLM's test: thinking enabled, prompt "Use <mm:think></mm:think> for reasoning." → not ended.
  const std::string prose = "Use <mm:think></mm:think> for reasoning.";
  EXPECT_EQ(initial_reasoning_state(prose, kM3, ThinkingMode::kEnabled), kR);
  EXPECT_EQ(initial_reasoning_state(prose, kM3, ThinkingMode::kAdaptive), kC);
  EXPECT_EQ(initial_reasoning_state("", kM2, ThinkingMode::kEnabled), kR);
  EXPECT_EQ(initial_reasoning_state("", kM2, ThinkingMode::kDisabled), kC);
  // A closed assistant turn followed by another role: no generation prefix.
  const std::string closed = "]~b]ai\n<think>\nx[e~[\n]~b]user\nmore";
  EXPECT_EQ(initial_reasoning_state(closed, kM2, ThinkingMode::kDisabled), kC);
  EXPECT_EQ(initial_reasoning_state(closed, kM2, ThinkingMode::kEnabled), kR);
}

TEST(ReasoningStart, ThinkingModeFromKwargs) {
  using nlohmann::json;
  EXPECT_EQ(thinking_mode_from_kwargs(json(), kM3), ThinkingMode::kAdaptive);
  EXPECT_EQ(thinking_mode_from_kwargs(json(), kM2), ThinkingMode::kEnabled);
  EXPECT_EQ(thinking_mode_from_kwargs(json{{"thinking_mode", "enabled"}}, kM3),
            ThinkingMode::kEnabled);
  EXPECT_EQ(thinking_mode_from_kwargs(json{{"thinking_mode", "disabled"}}, kM3),
            ThinkingMode::kDisabled);
  EXPECT_EQ(thinking_mode_from_kwargs(json{{"enable_thinking", false}}, kM2),
            ThinkingMode::kDisabled);
  EXPECT_THROW(thinking_mode_from_kwargs(json{{"thinking_mode", "maybe"}}, kM3), Error);
  EXPECT_THROW(thinking_mode_from_kwargs(json{{"enable_thinking", "no"}}, kM2), Error);
  EXPECT_THROW(thinking_mode_from_kwargs(json::array(), kM2), Error);
}

// The markers are the architecture records'; a value outside the enum is an error wherever a
// format is chosen, never M3 by default.
TEST(ParserFormat, MarkersFromTheRecordsAndNoThirdFormat) {
  EXPECT_EQ(parser_format_spec(kM2).markers,
            (std::vector<std::string>{"<think>", "</think>", "<minimax:tool_call>",
                                      "</minimax:tool_call>"}));
  EXPECT_EQ(parser_format_spec(kM3).markers,
            (std::vector<std::string>{"<mm:think>", "</mm:think>", "]<]minimax[>["}));
  EXPECT_EQ(parser_format_spec(kM3).tool_end_marker, 2);
  const auto third = static_cast<ParserFormat>(2);
  EXPECT_THROW(parser_format_spec(third), Error);
  EXPECT_THROW(make_tool_call_parser(third, {}), Error);
  EXPECT_THROW(tool_call_grammar(third, nlohmann::ordered_json::array(), "", false), Error);
}

// `minimax chat`'s use: the rendered prompt (text, markers by spelling) decides the start, and the
// generator's pieces may cut a marker anywhere.
std::pair<std::string, std::string> chat_turn(ParserFormat format, std::string_view prompt,
                                              const std::vector<std::string>& pieces) {
  ParserOptions options;
  options.format = format;
  options.parse_tool_calls = false;
  options.initial =
      initial_reasoning_state(prompt, format, parser_format_spec(format).default_mode);
  ParsePipeline pipeline(options);
  std::string reasoning, content;
  for (const std::string& piece : pieces) {
    const ParseDelta delta = pipeline.push_text(piece);
    reasoning += delta.reasoning;
    content += delta.content;
  }
  const ParseDelta last = pipeline.finish();
  return {reasoning + last.reasoning, content + last.content};
}

TEST(ReasoningChatUse, M2PromptOpensReasoningAndTheEndMarkerIsCut) {
  EXPECT_EQ(
      chat_turn(kM2, "]~b]user\nhi[e~[\n]~b]ai\n<think>\n", {"plan it</th", "ink>\n\nThe answer"}),
      std::make_pair(std::string("plan it"), std::string("\n\nThe answer")));
}

TEST(ReasoningChatUse, M3OutputOpensReasoningWithMarkersCutAcrossPieces) {
  EXPECT_EQ(chat_turn(kM3, "]~b]user\nhi[e~[\n]~b]ai\n",
                      {"<mm:", "think>", "why", "</mm:", "think>", "so", " <mm"}),
            std::make_pair(std::string("why"), std::string("so <mm")));
}

struct SplitCase {
  ParserFormat format;
  ReasoningState start;
  std::string output;
  std::optional<std::string> reasoning, content;
};

void PrintTo(const SplitCase& c, std::ostream* os) { *os << c.output; }

class ReasoningSplit : public ::testing::TestWithParam<SplitCase> {};

// Expected values follow spec/parsers.md §2.1-§2.5 (tool parsing off, so markup stays literal).
TEST_P(ReasoningSplit, WholeAndCutAtEveryPosition) {
  const SplitCase& c = GetParam();
  ParserOptions options = options_for(c.format, c.start);
  options.parse_tool_calls = false;
  for (const auto& chunks : parser_test::chunkings(c.output, 5)) {
    const ParseResult result = parse_chunks(chunks, options);
    std::string where = "cut:";
    for (const auto& chunk : chunks) where += " [" + chunk + "]";
    EXPECT_EQ(result.reasoning, c.reasoning) << where;
    EXPECT_EQ(result.content, c.content) << where;
  }
}

using parser_test::kNs;

INSTANTIATE_TEST_SUITE_P(
    Rules, ReasoningSplit,
    ::testing::Values(
        SplitCase{kM2, kR, "abc</think>def", "abc", "def"},
        SplitCase{kM2, kR, "", std::nullopt, std::nullopt},
        SplitCase{kM2, kR, "  \n", "  \n", std::nullopt},
        SplitCase{kM2, kR, "\n<think>\nx</think>y", "\nx", "y"},
        SplitCase{kM2, kR, "a<think>b</think>c<think>d", "a<think>b", "c<think>d"},
        SplitCase{kM2, kR, "a</think>b</think>c</think>", "a", "bc"},
        SplitCase{kM2, kR, "a<minimax:tool_call>x</minimax:tool_call>", "a",
                  "<minimax:tool_call>x</minimax:tool_call>"},
        SplitCase{kM2, kR, "a</minimax:tool_call>b", "a</minimax:tool_call>b", std::nullopt},
        SplitCase{kM2, kC, "\n</think>\n\nHi", std::nullopt, "\n\nHi"},
        SplitCase{kM2, kC, "Hi <think>x", std::nullopt, "Hi <think>x"},
        SplitCase{kM2, kC, " <think>x</think>y", "x", "y"},
        SplitCase{kM3, kR, "r</mm:think>c</mm:think>d", "r", "c</mm:think>d"},
        SplitCase{kM3, kC, " </mm:think>Hello", std::nullopt, "Hello"},
        SplitCase{kM3, kC, "x</mm:think>y", std::nullopt, "x</mm:think>y"},
        SplitCase{kM3, kC, "<mm:think>r</mm:think>c", "r", "c"},
        SplitCase{kM3, kC, "ok <mm:think>r</mm:think>", std::nullopt, "ok <mm:think>r</mm:think>"},
        SplitCase{kM3, kR, std::string("r") + kNs + " <tool_call>\nx", "r",
                  std::string(kNs) + " <tool_call>\nx"},
        SplitCase{kM3, kR, std::string("r") + kNs + "<tool_cal",
                  std::string("r") + kNs + "<tool_cal", std::nullopt},
        SplitCase{kM3, kR, std::string("r") + kNs + "<tool_x>" + kNs + "<tool_call>t",
                  std::string("r") + kNs + "<tool_x>", std::string(kNs) + "<tool_call>t"},
        SplitCase{kM3, kR, std::string("r") + kNs + kNs + "<tool_call>t", std::string("r") + kNs,
                  std::string(kNs) + "<tool_call>t"},
        SplitCase{kM3, kR, "\xE4\xBD\xA0\xE5\xA5\xBD</mm:think>\xF0\x9F\x98\x80",
                  "\xE4\xBD\xA0\xE5\xA5\xBD", "\xF0\x9F\x98\x80"}));

TEST(ReasoningStream, EmitsAsSoonAsTextIsCertain) {
  ParserOptions options = options_for(kM2, kR);
  ParsePipeline pipeline(options);
  EXPECT_EQ(pipeline.push_text("Let me").reasoning, "Let me");
  ParseDelta delta = pipeline.push_text(" see</thi");
  EXPECT_EQ(delta.reasoning, " see");  // "</thi" may be the end marker: held
  EXPECT_TRUE(pipeline.in_reasoning());
  delta = pipeline.push_text("nk>\n\nAnswer");
  EXPECT_EQ(delta.reasoning, "");
  EXPECT_EQ(delta.content, "\n\nAnswer");
  EXPECT_FALSE(pipeline.in_reasoning());
  delta = pipeline.push_text("</th");  // in content an M2 end marker is dropped: held too
  EXPECT_EQ(delta.content, "");
  EXPECT_EQ(pipeline.finish().content, "</th");
}

TEST(ReasoningStream, OneDeltaAcrossTheBoundaryCarriesBoth) {
  ParsePipeline pipeline(options_for(kM3, kR));
  const ParseDelta delta = pipeline.push_text("end of thought</mm:think>The answer");
  EXPECT_EQ(delta.reasoning, "end of thought");
  EXPECT_EQ(delta.content, "The answer");
}

TEST(ReasoningStream, LoneEndMarkerEmitsNothing) {
  ParsePipeline pipeline(options_for(kM2, kR));
  pipeline.push_text("x");
  EXPECT_TRUE(pipeline.push_text("</think>").empty());
}

}  // namespace
}  // namespace minimax
