// Tool-call parsers for MiniMax output (spec/parsers.md §3): content (marked text, after the
// reasoning parser) goes in; plain content and complete tool calls come out.
//
// A call is emitted once its invoke is complete (M2 </invoke>, M3 ]<]minimax[>[</invoke>), with
// its arguments whole: a call is never announced and then found malformed, so streamed and
// non-streamed parsing agree for every input, truncated ones included. Rules:
// - text outside tool-call blocks is content;
// - inside a block, whitespace between elements is dropped and every complete, well-formed invoke
//   is a call (several per block, several blocks per output);
// - the first thing in a block that does not parse (stray text, a bad or mismatched tag, the block
//   ending inside an invoke) sends the block's unconsumed text, from its start or from after the
//   last call, to content verbatim, and the rest of the block up to and including its end tag
//   follows as content: no text is lost;
// - a block that yields no call is content as a whole, markers included; a block that ends the
//   output unclosed keeps its calls and gives its unfinished tail to content;
// - argument values are typed by the tool's schema (serve/schema_coerce.h); unknown tools are
//   kept, with untyped arguments.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "serve/parser_format.h"
#include "serve/schema_coerce.h"

namespace minimax {

struct ParsedToolCall {
  std::string name;
  nlohmann::ordered_json arguments;  // an object, keys in the order the model wrote them
};

struct ToolParseOutput {
  std::string content;  // plain text
  std::vector<ParsedToolCall> calls;
};

class ToolCallParser {
 public:
  virtual ~ToolCallParser() = default;
  virtual void push(std::string_view marked, ToolParseOutput& out) = 0;
  // End of output: held text is released as content.
  virtual void finish(ToolParseOutput& out) = 0;
};

// `schemas` must outlive the parser.
std::unique_ptr<ToolCallParser> make_tool_call_parser(ParserFormat format,
                                                      const ToolSchemas& schemas);

// `name="x"`, `name='x'` or `name=x` (surrounding whitespace allowed) → x; "" when malformed or
// empty. The attribute text of <invoke ...> and <parameter ...>.
std::string parse_name_attribute(std::string_view attribute);

}  // namespace minimax
