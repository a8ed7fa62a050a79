// A subset of ECMA-262 regular expressions (what JSON Schema's `pattern` uses) compiled to a
// grammar rule that produces exactly the strings the pattern matches, each character written as
// the TextEncoding says (JSON string content or raw text).
//
// The subset: literal characters (any UTF-8), `.` (any character but newline), escapes \d \D \w
// \W \s \S and escaped punctuation, \n \t \r \f \v, \uXXXX; classes [...] and [^...] with ranges
// (ranges over ASCII, single non-ASCII characters; a negated class may list ASCII only); groups
// (...) and (?:...); alternation |; quantifiers * + ? {n} {n,} {n,m} (a lazy `?` suffix is
// accepted and changes nothing, since the grammar decides membership, not a match); ^ at the
// start and $ at the end. Without ^ (or $) the pattern may match anywhere, as JSON Schema says,
// so any text may come before (after) it. Everything else (backreferences, lookaround, \b,
// named groups, anchors inside the pattern, bounds above 1000) throws Error naming the offset.
//
// Limits, so that no pattern can exhaust a thread's stack or a shared step's time: groups nest
// at most 64 deep, and the bounds of repetitions nested inside each other multiply to at most
// 10,000 (an unbounded one counts its minimum): each combination of counts is a stack the
// automaton may carry (docs/api.md "Limits").
#pragma once

#include <string_view>

#include "text/grammar/char_class.h"
#include "text/grammar/grammar.h"

namespace minimax {

int32_t regex_rule(GrammarBuilder& builder, std::string_view pattern, const TextEncoding& encoding);

}  // namespace minimax
