// Parses template expressions with jinja2's grammar and precedence:
// conditional < or < and < not < comparisons/in < + - < ~ < * / // % < ** < unary - +
// < postfix (.attr, [index], call) and filters/tests (| f, is t).
#pragma once

#include "text/jinja/ast.h"
#include "text/jinja/token_stream.h"

namespace minimax::jinja {

// One expression; with_conditional=false stops before a trailing `if` (as in `for x in y if c`).
ExprPtr parse_expression(TokenStream& tokens, bool with_conditional = true);
// Comma-separated expressions, as a list node when there is a comma (jinja2 tuples).
ExprPtr parse_tuple(TokenStream& tokens, bool with_conditional = true);
// `| name(args)` with the stream at the `|`; operand may be null (filter applied later).
ExprPtr parse_filter(TokenStream& tokens, ExprPtr operand);

}  // namespace minimax::jinja
