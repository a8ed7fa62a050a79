// Shared by the parser tests: the pipeline run whole or in chunks, a JSON view of a result (for
// comparisons that print readably), the ways to cut a text into chunks, and the case files of
// tests/data/parsers.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "serve/parse_pipeline.h"

namespace minimax {

// Readable test parameters.
inline void PrintTo(ParserFormat format, std::ostream* os) {
  *os << parser_format_spec(format).name;
}
inline void PrintTo(ReasoningState state, std::ostream* os) {
  *os << (state == ReasoningState::kReasoning ? "reasoning" : "content");
}

namespace parser_test {

// The namespace marker M3's tool-call tags carry.
inline const std::string kNs = "]<]minimax[>[";

inline ParserOptions options_for(ParserFormat format, ReasoningState initial,
                                 nlohmann::json tools = nullptr) {
  ParserOptions options;
  options.format = format;
  options.initial = initial;
  options.tools = std::move(tools);
  options.id_seed = 7;
  return options;
}

// The message with arguments kept as the exact strings the parser produced.
inline std::string to_json(const ParseResult& result) {
  nlohmann::ordered_json out;
  out["reasoning"] = result.reasoning ? nlohmann::ordered_json(*result.reasoning) : nullptr;
  out["content"] = result.content ? nlohmann::ordered_json(*result.content) : nullptr;
  out["tool_calls"] = nlohmann::ordered_json::array();
  for (const ToolCall& call : result.tool_calls)
    out["tool_calls"].push_back(
        {{"id", call.id}, {"name", call.name}, {"arguments", call.arguments}});
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Streaming: one push per chunk, the message folded from the returned deltas.
inline ParseResult parse_chunks(const std::vector<std::string>& chunks,
                                const ParserOptions& options) {
  ParsePipeline pipeline(options);
  DeltaAccumulator deltas;
  for (const std::string& chunk : chunks) deltas.add(pipeline.push_text(chunk));
  deltas.add(pipeline.finish());
  return deltas.result();
}

// Every cut of `text` into two pieces, one piece per byte, and `random_cuts` random cuttings.
inline std::vector<std::vector<std::string>> chunkings(const std::string& text,
                                                       int random_cuts = 20) {
  std::vector<std::vector<std::string>> out;
  for (size_t at = 0; at <= text.size(); ++at) out.push_back({text.substr(0, at), text.substr(at)});
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  out.push_back(bytes);
  std::mt19937 random(12345);
  for (int n = 0; n < random_cuts && !text.empty(); ++n) {
    std::vector<std::string> pieces;
    for (size_t at = 0; at < text.size();) {
      const size_t length = 1 + random() % 12;
      pieces.push_back(text.substr(at, length));
      at += length;
    }
    out.push_back(pieces);
  }
  return out;
}

struct ParserCase {
  std::string name;
  nlohmann::json data;  // parser, input, expected
};

inline std::vector<ParserCase> load_parser_cases() {
  std::vector<ParserCase> cases;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(MINIMAX_TEST_DATA) + "/parsers")) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    cases.push_back({entry.path().stem().string(), nlohmann::json::parse(in)});
  }
  std::sort(cases.begin(), cases.end(),
            [](const ParserCase& a, const ParserCase& b) { return a.name < b.name; });
  return cases;
}

// The options a case's input asks for (the start state from its prompt and kwargs).
inline ParserOptions case_options(const nlohmann::json& data) {
  const nlohmann::json& input = data["input"];
  const ParserFormat format = parse_parser_format(data["parser"].get<std::string>(), "parser");
  const ThinkingMode mode =
      thinking_mode_from_kwargs(input.value("chat_template_kwargs", nlohmann::json()), format);
  const std::string prompt = input.value("prompt", std::string());
  return options_for(format, initial_reasoning_state(prompt, format, mode),
                     input.value("tools", nlohmann::json()));
}

}  // namespace parser_test
}  // namespace minimax
