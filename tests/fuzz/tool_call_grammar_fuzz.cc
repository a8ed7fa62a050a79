// libFuzzer target for the tool-call grammar (serve/tool_call_grammar.h): any byte string is put
// in a chat request as its `tools` array and read by the request parser as the server reads it
// (nesting, JSON and the tools' shape checked, a 400 otherwise); the tools it accepts must compile,
// for MiniMax-M2 and M3, to a grammar or throw SchemaError, and a grammar that compiles is run as
// constrained decoding runs it (grammar_walk.h). An even-sized input asks for any tool, in
// parallel (tool_choice "required"); an odd-sized one names the first tool. Crashes, hangs, other
// exceptions, wrong masks and sanitizer reports are the failures. Seed corpus:
// tests/data/tool_call_tools/.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "grammar_walk.h"
#include "serve/api_error.h"
#include "serve/json_schema_grammar.h"
#include "serve/openai_request.h"
#include "serve/tool_call_grammar.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view tools(reinterpret_cast<const char*>(data), size);
  const std::string body =
      R"({"messages":[{"role":"user","content":"hi"}],"tools":)" + std::string(tools) + "}";
  minimax::ChatRequest request;
  try {
    request = minimax::parse_chat_request(body);
  } catch (const minimax::ApiException&) {
    return 0;
  }
  if (request.tools.is_null()) return 0;  // an empty array: no tools
  const bool named = size % 2 == 1;
  const std::string only_tool =
      named ? request.tools[0]["function"]["name"].get<std::string>() : "";
  minimax::fuzz::WalkChoices choices(tools);
  for (auto format : {minimax::ParserFormat::kMinimaxM2, minimax::ParserFormat::kMinimaxM3}) {
    std::shared_ptr<const minimax::Grammar> grammar;
    try {
      grammar = std::make_shared<const minimax::Grammar>(
          minimax::tool_call_grammar(format, request.tools, only_tool, !named));
    } catch (const minimax::SchemaError&) {
      continue;
    }
    minimax::fuzz::walk_grammar(grammar, choices, 32);
  }
  return 0;
}
