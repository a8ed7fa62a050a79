// `minimax parse --parser minimax_m2|minimax_m3`: runs the server's reasoning and tool-call
// parsers on model output given as JSON on stdin, for users debugging tool calls and for tests.
//   stdin:  {"output": "..."} or {"chunks": ["...", ...]}, optional "prompt" (the rendered prompt;
//           only its generation prefix matters), "tools" (OpenAI tools array, for value types),
//           "chat_template_kwargs" ({"thinking_mode": ...} or {"enable_thinking": ...}).
//   stdout: {"reasoning_content": str|null, "content": str|null,
//            "tool_calls": [{"name": str, "arguments": {...}}]}
// With "chunks" the streaming path runs, one push per chunk, and the printed message is the
// concatenation of the deltas it returned, so comparing the two forms shows streaming equals
// non-streaming.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "cli/commands.h"
#include "serve/parse_pipeline.h"

namespace minimax::cli {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

const json* optional_field(const json& input, const char* key, json::value_t type,
                           const char* type_name) {
  auto it = input.find(key);
  if (it == input.end() || it->is_null()) return nullptr;
  if (it->type() != type) fail("stdin: \"{}\" must be {}, got {}", key, type_name, it->type_name());
  return &*it;
}

ojson message_json(const ParseResult& result) {
  ojson message = ojson::object();
  message["reasoning_content"] = result.reasoning ? ojson(*result.reasoning) : ojson(nullptr);
  message["content"] = result.content ? ojson(*result.content) : ojson(nullptr);
  message["tool_calls"] = ojson::array();
  for (size_t i = 0; i < result.tool_calls.size(); ++i) {
    const ToolCall& call = result.tool_calls[i];
    ojson arguments = ojson::parse(call.arguments, nullptr, /*allow_exceptions=*/false);
    if (arguments.is_discarded() || !arguments.is_object())
      fail("tool call {} ({}): arguments are not a JSON object: {}", i, call.name, call.arguments);
    message["tool_calls"].push_back({{"name", call.name}, {"arguments", std::move(arguments)}});
  }
  return message;
}

void run_parse(const std::string& parser_name) {
  const ParserFormat format = parse_parser_format(parser_name, "--parser");
  const std::string text{std::istreambuf_iterator<char>(std::cin),
                         std::istreambuf_iterator<char>()};
  const json input = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (input.is_discarded()) fail("stdin: not valid JSON");
  if (!input.is_object()) fail("stdin: expected a JSON object, got {}", input.type_name());

  const json* output = optional_field(input, "output", json::value_t::string, "a string");
  const json* chunks = optional_field(input, "chunks", json::value_t::array, "an array");
  if ((output != nullptr) == (chunks != nullptr))
    fail("stdin: give exactly one of \"output\" (a string) and \"chunks\" (an array of strings)");
  const json* prompt = optional_field(input, "prompt", json::value_t::string, "a string");
  const json* tools = optional_field(input, "tools", json::value_t::array, "an array");
  const json* kwargs =
      optional_field(input, "chat_template_kwargs", json::value_t::object, "an object");

  ParserOptions options;
  options.format = format;
  options.tools = tools ? *tools : json(nullptr);
  const ThinkingMode mode = thinking_mode_from_kwargs(kwargs ? *kwargs : json(nullptr), format);
  options.initial = initial_reasoning_state(
      prompt ? prompt->get_ref<const std::string&>() : std::string(), format, mode);
  options.id_seed = 0;

  ParseResult result;
  if (output) {
    result = parse_output(output->get_ref<const std::string&>(), options);
  } else {
    ParsePipeline pipeline(options);
    DeltaAccumulator deltas;
    for (size_t i = 0; i < chunks->size(); ++i) {
      const json& chunk = (*chunks)[i];
      if (!chunk.is_string())
        fail("stdin: chunks[{}] must be a string, got {}", i, chunk.type_name());
      deltas.add(pipeline.push_text(chunk.get_ref<const std::string&>()));
    }
    deltas.add(pipeline.finish());
    result = deltas.result();
  }
  const std::string printed =
      message_json(result).dump(2, ' ', false, json::error_handler_t::replace);
  std::fputs(printed.c_str(), stdout);
  std::fputc('\n', stdout);
}

}  // namespace

void register_parse(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "parse", "Split model output (JSON on stdin) into reasoning, content and tool calls");
  auto parser = std::make_shared<std::string>();
  cmd->add_option("--parser", *parser, "Output format: minimax_m2 or minimax_m3")->required();
  cmd->footer(
      "stdin: {\"output\": \"...\"} or {\"chunks\": [\"...\", ...]} (streamed, one push per "
      "chunk), optional \"prompt\", \"tools\", \"chat_template_kwargs\".\nstdout: "
      "{\"reasoning_content\", \"content\", \"tool_calls\": [{\"name\", \"arguments\"}]}.");
  cmd->callback([parser] { run_parse(*parser); });
}

}  // namespace minimax::cli
