// Streaming equals non-streaming: every case of tests/data/parsers and hundreds of generated
// outputs (well-formed, mutated and random markup soup), cut at every position, byte by byte and
// at random, must give exactly the whole-output message — reasoning, content, and each call's
// arguments text byte for byte. Also: the cases' expected messages, deltas that stay valid UTF-8,
// and, with reasoning off, an output without calls comes back whole as content.
#include <gtest/gtest.h>

#include <random>

#include "parser_test_helpers.h"
#include "text/utf8.h"

namespace minimax {
namespace {

using parser_test::chunkings;
using parser_test::parse_chunks;
using parser_test::to_json;

// The expected message of a case file, as `minimax parse` prints it.
nlohmann::json message(const ParseResult& result) {
  nlohmann::json out;
  out["reasoning_content"] = result.reasoning ? nlohmann::json(*result.reasoning) : nullptr;
  out["content"] = result.content ? nlohmann::json(*result.content) : nullptr;
  out["tool_calls"] = nlohmann::json::array();
  for (const ToolCall& call : result.tool_calls)
    out["tool_calls"].push_back(
        {{"name", call.name}, {"arguments", nlohmann::json::parse(call.arguments)}});
  return out;
}

TEST(ParserCases, WholeOutputGivesTheExpectedMessage) {
  const auto cases = parser_test::load_parser_cases();
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    const ParserOptions options = parser_test::case_options(c.data);
    const ParseResult result = parse_output(c.data["input"]["output"].get<std::string>(), options);
    EXPECT_EQ(message(result), c.data["expected"]) << c.name;
  }
}

TEST(ParserCases, EveryCuttingEqualsTheWholeOutput) {
  for (const auto& c : parser_test::load_parser_cases()) {
    const ParserOptions options = parser_test::case_options(c.data);
    const std::string output = c.data["input"]["output"].get<std::string>();
    const std::string whole = to_json(parse_output(output, options));
    for (const auto& chunks : chunkings(output)) {
      const std::string streamed = to_json(parse_chunks(chunks, options));
      if (streamed != whole) {
        std::string cut;
        for (const auto& chunk : chunks) cut += "[" + chunk + "]";
        ADD_FAILURE() << c.name << " cut " << cut << "\nstreamed " << streamed << "\nwhole    "
                      << whole;
        break;
      }
    }
  }
}

TEST(ParserCases, DeltasAreValidUtf8AndCallsArriveWhole) {
  for (const auto& c : parser_test::load_parser_cases()) {
    const ParserOptions options = parser_test::case_options(c.data);
    const std::string output = c.data["input"]["output"].get<std::string>();
    // One chunk per character, as a detokenizer delivers text.
    ParsePipeline pipeline(options);
    std::vector<ParseDelta> deltas;
    for (size_t at = 0; at < output.size();) {
      const size_t length = utf8::scan(output, at).length;
      deltas.push_back(pipeline.push_text(output.substr(at, length)));
      at += length;
    }
    deltas.push_back(pipeline.finish());
    int next_index = 0;
    for (const ParseDelta& delta : deltas) {
      EXPECT_TRUE(utf8::is_valid(delta.reasoning)) << c.name;
      EXPECT_TRUE(utf8::is_valid(delta.content)) << c.name;
      for (const ToolCallDelta& call : delta.tool_calls) {
        EXPECT_EQ(call.index, next_index++) << c.name;
        EXPECT_FALSE(call.id.empty()) << c.name;
        EXPECT_FALSE(call.name.empty()) << c.name;
        EXPECT_TRUE(nlohmann::json::parse(call.arguments).is_object()) << c.name;
      }
    }
  }
}

// Generated outputs: sequences of fragments from the format's markup, plain text and whitespace.
struct Generator {
  ParserFormat format;
  std::mt19937 random{2024};

  std::string fragment_soup() {
    static const std::vector<std::string> m2 = {"<think>",
                                                "</think>",
                                                "<minimax:tool_call>",
                                                "</minimax:tool_call>",
                                                "<invoke name=\"f\">",
                                                "<invoke name=\"get_weather\">",
                                                "</invoke>",
                                                "<parameter name=\"city\">",
                                                "<parameter name=\"days\">",
                                                "</parameter>",
                                                "Oslo",
                                                " 3 ",
                                                "\n",
                                                "  ",
                                                "<",
                                                ">",
                                                "</",
                                                "hello",
                                                "\xE4\xBD\xA0",
                                                "<think",
                                                "</inv",
                                                "<invoke ",
                                                "name=",
                                                "\""};
    static const std::vector<std::string> m3 = {"<mm:think>",
                                                "</mm:think>",
                                                "]<]minimax[>[",
                                                "]<]minimax[>[<tool_call>",
                                                "]<]minimax[>[</tool_call>",
                                                "]<]minimax[>[<invoke name=\"f\">",
                                                "]<]minimax[>[</invoke>",
                                                "]<]minimax[>[<city>",
                                                "]<]minimax[>[</city>",
                                                "]<]minimax[>[<item>",
                                                "]<]minimax[>[</item>",
                                                "<tool_call>",
                                                "Oslo",
                                                " 3 ",
                                                "\n",
                                                " ",
                                                "<",
                                                ">",
                                                "x",
                                                "\xF0\x9F\x98\x80",
                                                "]<]mini",
                                                "<tool_",
                                                "]<]minimax[>[<days>",
                                                "]<]minimax[>[</days>"};
    const auto& pool = format == ParserFormat::kMinimaxM2 ? m2 : m3;
    std::string out;
    const int count = 3 + random() % 25;
    for (int i = 0; i < count; ++i) out += pool[random() % pool.size()];
    return out;
  }

  std::vector<std::string> well_formed_parts() {
    std::vector<std::string> parts = {"Thinking about it.", "</think>", "Sure. "};
    if (format == ParserFormat::kMinimaxM3) parts[1] = "</mm:think>";
    const int invokes = 1 + random() % 3;
    if (format == ParserFormat::kMinimaxM2) {
      parts.push_back("<minimax:tool_call>\n");
      for (int i = 0; i < invokes; ++i) {
        parts.push_back("<invoke name=\"get_weather\">\n");
        parts.push_back("<parameter name=\"city\">Oslo</parameter>\n");
        parts.push_back("<parameter name=\"days\"> 0" + std::to_string(i) + "</parameter>\n");
        parts.push_back("</invoke>\n");
      }
      parts.push_back("</minimax:tool_call>");
    } else {
      const std::string ns = "]<]minimax[>[";
      parts.push_back(ns + "<tool_call>\n");
      for (int i = 0; i < invokes; ++i) {
        parts.push_back(ns + "<invoke name=\"get_weather\">");
        parts.push_back(ns + "<city>Oslo" + ns + "</city>");
        parts.push_back(ns + "<days>" + std::to_string(i) + ns + "</days>");
        parts.push_back(ns + "<tags>" + ns + "<item>a" + ns + "</item>" + ns + "</tags>");
        parts.push_back(ns + "</invoke>\n");
      }
      parts.push_back(ns + "</tool_call>");
    }
    parts.push_back(" Done.");
    return parts;
  }

  // A well-formed output, sometimes with one part dropped, doubled or cut short.
  std::string mutated() {
    std::vector<std::string> parts = well_formed_parts();
    const size_t at = random() % parts.size();
    switch (random() % 4) {
      case 0:
        parts.erase(parts.begin() + at);
        break;
      case 1:
        parts.insert(parts.begin() + at, parts[at]);
        break;
      case 2:
        parts.resize(at + 1);
        parts.back().resize(parts.back().size() / 2);
        break;
      default:
        break;  // unchanged
    }
    std::string out;
    for (const auto& part : parts) out += part;
    return out;
  }
};

const nlohmann::json kWeather = nlohmann::json::parse(R"([{"type": "function", "function": {
  "name": "get_weather", "parameters": {"type": "object", "properties": {
  "city": {"type": "string"}, "days": {"type": "integer"}, "tags": {"type": "array"}}}}}])");

class GeneratedOutputs : public ::testing::TestWithParam<ParserFormat> {};

TEST_P(GeneratedOutputs, StreamingEqualsWhole) {
  Generator generator{GetParam()};
  size_t calls = 0, outputs_with_calls = 0;
  for (int n = 0; n < 400; ++n) {
    const std::string output = n % 2 ? generator.fragment_soup() : generator.mutated();
    for (ReasoningState start : {ReasoningState::kReasoning, ReasoningState::kContent}) {
      ParserOptions options = parser_test::options_for(GetParam(), start, kWeather);
      const ParseResult whole = parse_output(output, options);
      calls += whole.tool_calls.size();
      outputs_with_calls += !whole.tool_calls.empty();
      const std::string expected = to_json(whole);
      for (const auto& chunks : chunkings(output, 3)) {
        // Every two-piece cut is covered by the case tests; here bytes and random cuts.
        if (chunks.size() == 2 && n % 8) continue;
        const std::string streamed = to_json(parse_chunks(chunks, options));
        ASSERT_EQ(streamed, expected) << "output: " << output;
      }
    }
  }
  EXPECT_GT(outputs_with_calls, 150u);  // the property is exercised on real calls
  EXPECT_GT(calls, 300u);
}

TEST_P(GeneratedOutputs, WithoutCallsAllTextComesBack) {
  Generator generator{GetParam()};
  size_t without_calls = 0;
  for (int n = 0; n < 400; ++n) {
    const std::string output = n % 2 ? generator.fragment_soup() : generator.mutated();
    ParserOptions options =
        parser_test::options_for(GetParam(), ReasoningState::kContent, kWeather);
    options.parse_reasoning = false;
    const ParseResult result = parse_output(output, options);
    if (!result.tool_calls.empty()) continue;
    ++without_calls;
    EXPECT_EQ(result.content.value_or(""), output);
  }
  EXPECT_GT(without_calls, 100u);
}

INSTANTIATE_TEST_SUITE_P(Formats, GeneratedOutputs,
                         ::testing::Values(ParserFormat::kMinimaxM2, ParserFormat::kMinimaxM3),
                         [](const auto& info) {
                           return info.param == ParserFormat::kMinimaxM2 ? "M2" : "M3";
                         });

}  // namespace
}  // namespace minimax
