// The grammar of a MiniMax tool-call block whose calls satisfy the tools' parameter schemas, for
// tool_choice "required" and a named function (serve/json_schema_grammar.h compiles the values).
//
// M2: <minimax:tool_call>\n then per call <invoke name="f">\n, one
//     <parameter name="k">value</parameter>\n per argument, </invoke>\n; then
//     </minimax:tool_call>. A string value is raw text without '<' (the parser ends a value at
//     the first "</parameter>" and trims whitespace); other values are compact JSON.
// M3: NS<tool_call>\n then per call NS<invoke name="f">, one NS<k>value NS</k> per argument (an
//     object's members as child elements, an array's entries as NS<item> children), NS</invoke>\n;
//     then NS</tool_call>. Scalar leaves are raw text (strings) or JSON literals.
// Properties are written in their declared order: required ones always, optional ones when the
// model chooses. The block's markers are special tokens (grammar marker symbols). A name is quoted
// with " or, when it holds a double quote, with '.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "serve/parser_format.h"
#include "text/grammar/grammar.h"

namespace minimax {

// `tools` is the request's tools array. `only_tool` names the one tool a named tool_choice calls
// (empty: any of them, tool_choice "required"). `parallel`: one or more calls, else exactly one.
// Throws SchemaError (serve/json_schema_grammar.h) whose path starts at the tools array, e.g.
// "tools[0].function.parameters.properties.x.type", or "tools[1].function.name" for a name the
// format cannot carry.
Grammar tool_call_grammar(ParserFormat format, const nlohmann::ordered_json& tools,
                          std::string_view only_tool, bool parallel);

}  // namespace minimax
