// Token-level marker detection: with a tokenizer whose markers are single special tokens, parsing
// the token stream gives what parsing the text gives; a marker the model spells with ordinary
// tokens is text; the start state read from prompt ids matches the one read from prompt text.
#include <gtest/gtest.h>

#include "base/error.h"
#include "parser_test_helpers.h"
#include "text/bpe_trainer.h"

namespace minimax {
namespace {

// A small tokenizer trained on the case files, with the MiniMax special tokens.
const BpeTokenizer& tokenizer() {
  static const BpeTokenizer instance = [] {
    std::vector<std::string> corpus;
    for (const auto& c : parser_test::load_parser_cases()) {
      corpus.push_back(c.data["input"]["output"].get<std::string>());
      corpus.push_back(c.data["input"].value("prompt", std::string()));
    }
    return BpeTokenizer::from_json(train_byte_level_bpe(corpus, 400, minimax_special_tokens()),
                                   "parser-test-tokenizer");
  }();
  return instance;
}

TEST(TokenLevel, TokensParseLikeText) {
  for (const auto& c : parser_test::load_parser_cases()) {
    const ParserOptions options = parser_test::case_options(c.data);
    const std::string output = c.data["input"]["output"].get<std::string>();
    const std::vector<int32_t> ids = tokenizer().encode(output);
    EXPECT_EQ(parser_test::to_json(parse_output_tokens(ids, tokenizer(), options)),
              parser_test::to_json(parse_output(output, options)))
        << c.name;
  }
}

TEST(TokenLevel, PromptIdsGiveTheSameStartState) {
  size_t with_prompt = 0;
  for (const auto& c : parser_test::load_parser_cases()) {
    const nlohmann::json& input = c.data["input"];
    if (!input.contains("prompt")) continue;
    ++with_prompt;
    const ParserFormat format = parse_parser_format(c.data["parser"].get<std::string>(), "parser");
    for (ThinkingMode mode :
         {ThinkingMode::kEnabled, ThinkingMode::kDisabled, ThinkingMode::kAdaptive}) {
      const std::string prompt = input["prompt"].get<std::string>();
      EXPECT_EQ(initial_reasoning_state(tokenizer().encode(prompt), tokenizer(), format, mode),
                initial_reasoning_state(prompt, format, mode))
          << c.name;
    }
  }
  EXPECT_GE(with_prompt, 10u);
}

TEST(TokenLevel, SpelledMarkerIsText) {
  // "</think>" written with ordinary tokens inside the reasoning, then the real end token.
  std::vector<int32_t> ids = tokenizer().encode("The tag ");
  const std::vector<int32_t> spelled = tokenizer().encode("</think>", /*parse_special=*/false);
  ASSERT_GT(spelled.size(), 1u);
  ids.insert(ids.end(), spelled.begin(), spelled.end());
  const std::vector<int32_t> rest = tokenizer().encode(" ends it.</think>Answer");
  ids.insert(ids.end(), rest.begin(), rest.end());
  const ParserOptions options =
      parser_test::options_for(ParserFormat::kMinimaxM2, ReasoningState::kReasoning);
  const ParseResult by_token = parse_output_tokens(ids, tokenizer(), options);
  EXPECT_EQ(by_token.reasoning, "The tag </think> ends it.");
  EXPECT_EQ(by_token.content, "Answer");
  // Text-level detection cannot tell the two apart.
  const ParseResult by_text = parse_output(tokenizer().decode(ids), options);
  EXPECT_EQ(by_text.reasoning, "The tag ");
}

TEST(TokenLevel, SpelledRoleHeaderInPromptIsNotAHeader) {
  // The user quotes "]~b]ai\n<think>\n" as text; the real generation prefix closes reasoning.
  std::vector<int32_t> ids = tokenizer().encode("]~b]ai\n<think>\n</think>\n\n");
  const std::vector<int32_t> quoted = tokenizer().encode("]~b]ai\n<think>\n", false);
  ids.insert(ids.end(), quoted.begin(), quoted.end());
  EXPECT_EQ(
      initial_reasoning_state(ids, tokenizer(), ParserFormat::kMinimaxM2, ThinkingMode::kEnabled),
      ReasoningState::kContent);
}

TEST(TokenLevel, MissingMarkerTokenIsAnError) {
  const BpeTokenizer plain = BpeTokenizer::from_json(
      train_byte_level_bpe({"hello world"}, 260, {"]~b]"}), "plain-tokenizer");
  try {
    ParsePipeline pipeline(
        parser_test::options_for(ParserFormat::kMinimaxM3, ReasoningState::kContent), plain);
    FAIL() << "accepted a tokenizer without marker tokens";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "plain-tokenizer: marker '<mm:think>' is not a single token, so it cannot be "
              "detected by token id");
  }
}

TEST(TokenLevel, MarkerTextBeforeTheTokenIsKept) {
  // A detokenizer that had to give up an incomplete character reports it with the next token.
  MarkerLexer lexer =
      MarkerLexer::for_tokens(parser_format_spec(ParserFormat::kMinimaxM2).markers, tokenizer());
  const int32_t end = *tokenizer().token_id("</think>");
  EXPECT_EQ(lexer.push_token(end, "\xEF\xBF\xBD</think>"),
            "\xEF\xBF\xBD" + std::string(1, marker_byte(1)));
  EXPECT_EQ(lexer.push_token(end, ""), std::string(1, marker_byte(1)));  // special tokens skipped
  EXPECT_EQ(lexer.push_text("</think>"), "</think>");  // plain text is never a marker here
}

}  // namespace
}  // namespace minimax
