// Grammars from hostile requests (issue 32 F1–F4): patterns and schemas that would exhaust the
// stack or a shared step's time are refused with a SchemaError naming the limit, cycles through
// $ref compile to recursion, and the automaton and the mask stop at their limits with an Error
// instead of crashing or stalling.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exploding_grammar.h"
#include "schema_samples.h"
#include "serve/json_schema_grammar.h"
#include "serve/tool_call_grammar.h"
#include "text/grammar/grammar_matcher.h"
#include "text/grammar/regex_grammar.h"

namespace minimax {
namespace {

using ::testing::HasSubstr;
using testing::OJson;

// The refusal of `schema` as "path: message", or "(accepted)".
std::string refusal(const OJson& schema) {
  try {
    json_schema_grammar(schema);
  } catch (const SchemaError& e) {
    return e.path() + ": " + e.what();
  }
  return "(accepted)";
}

OJson string_pattern(const std::string& pattern) {
  return OJson{{"type", "string"}, {"pattern", pattern}};
}

TEST(HostileGrammar, DeeplyNestedGroupsAreRefusedNotRecursed) {
  // F1: 20,000 nested groups overflowed the recursive parser's stack.
  const std::string deep = std::string(20000, '(') + "a" + std::string(20000, ')');
  const std::string why = refusal(string_pattern(deep));
  EXPECT_THAT(why, HasSubstr("pattern: "));
  EXPECT_THAT(why, HasSubstr("nested deeper than 64"));
  // Within the limit, nesting works.
  const std::string ok = std::string(64, '(') + "a" + std::string(64, ')');
  EXPECT_EQ(refusal(string_pattern("^" + ok + "$")), "(accepted)");
  EXPECT_THAT(refusal(string_pattern("^(" + ok + ")$")), HasSubstr("nested deeper than 64"));
}

TEST(HostileGrammar, NestedRepeatsMultiplyToAtMostTenThousand) {
  // F4: 28 characters made every mask take seconds.
  EXPECT_THAT(refusal(string_pattern("^((.{0,100}){0,100}){0,100}$")),
              HasSubstr("multiply to 1000000 iterations; the limit is 10000"));
  EXPECT_EQ(refusal(string_pattern("^((.{0,100}){0,100})$")), "(accepted)");
  EXPECT_THAT(refusal(string_pattern("^(a{0,101}){0,100}$")), HasSubstr("10100"));
  // An unbounded repeat counts its minimum; repeats side by side do not multiply.
  EXPECT_EQ(refusal(string_pattern("^(a{0,1000})*(b{0,1000})+c{1000}$")), "(accepted)");
  EXPECT_THAT(refusal(string_pattern("^((a{0,1000}){20,})$")), HasSubstr("20000"));
  // Alternatives take the larger product.
  EXPECT_THAT(refusal(string_pattern("^(x|(a{0,200}){0,100})$")), HasSubstr("20000"));
}

// A chain of `count` $defs, each wrapping the next as `wrap` says ("" = a bare $ref).
OJson chained_defs(int count, const std::string& wrap) {
  OJson defs = OJson::object();
  for (int i = 0; i < count; ++i) {
    const OJson next = {{"$ref", "#/$defs/d" + std::to_string(i + 1)}};
    OJson def = next;
    if (wrap == "items") def = OJson{{"type", "array"}, {"items", next}};
    if (i + 1 == count) def = OJson{{"type", "integer"}};
    defs["d" + std::to_string(i)] = def;
  }
  return OJson{{"$defs", defs}, {"$ref", "#/$defs/d0"}};
}

TEST(HostileGrammar, SchemasDeepThroughRefAreRefusedNamingTheLimit) {
  // F3: flat as JSON, 30,000 (10,000) levels deep through $ref.
  EXPECT_THAT(refusal(chained_defs(30000, "")), HasSubstr("deeper than 64 levels"));
  EXPECT_THAT(refusal(chained_defs(10000, "items")), HasSubstr("deeper than 64 levels"));
  EXPECT_EQ(refusal(chained_defs(30, "")), "(accepted)");
  EXPECT_EQ(refusal(chained_defs(30, "items")), "(accepted)");
}

TEST(HostileGrammar, GrammarsPastTheRuleLimitAreRefused) {
  OJson any_of = OJson::array();
  for (size_t i = 0; i <= kMaxGrammarRules; ++i) any_of.push_back(OJson{{"const", i}});
  EXPECT_THAT(refusal(OJson{{"anyOf", any_of}}), HasSubstr("more than 100000 rules"));
}

OJson tool(const OJson& parameters) {
  return OJson::array({OJson{{"type", "function"},
                             {"function", OJson{{"name", "f"}, {"parameters", parameters}}}}});
}

std::string tool_refusal(ParserFormat format, const OJson& tools) {
  try {
    tool_call_grammar(format, tools, "", true);
  } catch (const SchemaError& e) {
    return e.path() + ": " + e.what();
  }
  return "(accepted)";
}

TEST(HostileGrammar, ToolSchemasReferringToThemselvesCompileToRecursion) {
  // F2: 203 bytes followed `$ref` forever in the tool-call grammar compiler.
  const OJson self = OJson::parse(R"({"type":"object","properties":{"c":{"$ref":"#"}}})");
  for (ParserFormat format : {ParserFormat::kMinimaxM2, ParserFormat::kMinimaxM3}) {
    EXPECT_EQ(tool_refusal(format, tool(self)), "(accepted)");
    const OJson via_defs = OJson::parse(R"({"type":"object","$defs":{"n":{"type":"object",
        "properties":{"next":{"$ref":"#/$defs/n"},"v":{"type":"integer"}}}},
        "properties":{"head":{"$ref":"#/$defs/n"}}})");
    EXPECT_EQ(tool_refusal(format, tool(via_defs)), "(accepted)");
    // A cycle that consumes nothing cannot be run by a top-down matcher: refused.
    const OJson empty_cycle = OJson::parse(R"({"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},
        "b":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}})");
    EXPECT_THAT(tool_refusal(format, tool(empty_cycle)), HasSubstr("left-recursive"));
    for (const char* wrap : {"", "items"}) {
      OJson deep = chained_defs(30000, wrap);
      deep["type"] = "object";
      deep["properties"] = OJson{{"p", OJson{{"$ref", "#/$defs/d0"}}}};
      deep.erase("$ref");
      EXPECT_THAT(tool_refusal(format, tool(deep)), HasSubstr("deeper than 64 levels")) << wrap;
    }
  }
  // The M3 grammar of the self-referring tool takes a nested argument.
  const Grammar g = tool_call_grammar(ParserFormat::kMinimaxM3, tool(self), "", false);
  EXPECT_GT(g.rules.size(), 0u);
}

TEST(HostileGrammar, AStateWithTooManyStacksIsAnErrorNotAStall) {
  GrammarAutomaton automaton(exploding_grammar());
  int32_t state = automaton.start();
  try {
    for (int i = 0; i < 1000; ++i) state = automaton.next(state, 'a');
    FAIL() << "no limit reached";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("more than 16384 stacks"));
  }
}

TEST(HostileGrammar, AMaskPastItsDeadlineStopsAndLeavesNoPartialMask) {
  std::vector<std::string> tokens;
  for (int c = 'a'; c <= 'z'; ++c) tokens.push_back(std::string(1, static_cast<char>(c)));
  for (int c = 'a'; c <= 'z'; ++c) tokens.push_back(std::string(3, static_cast<char>(c)));
  auto vocab =
      std::make_shared<const TokenTrie>(tokens, std::unordered_map<std::string, int32_t>{});
  GrammarBuilder b;
  auto grammar = std::make_shared<const Grammar>(b.build(regex_rule(b, "^[a-m]{0,5}$", {})));
  GrammarMatcher matcher(grammar, vocab, {});
  const auto past = GrammarMatcher::Clock::now() - std::chrono::seconds(1);
  EXPECT_THROW(matcher.allowed_tokens(past), GrammarWorkExceeded);
  // Computed again without a deadline, the mask is whole: what a fresh matcher gives.
  GrammarMatcher fresh(grammar, vocab, {});
  EXPECT_EQ(matcher.allowed_tokens(), fresh.allowed_tokens());
  EXPECT_TRUE(bitmask_test(matcher.allowed_tokens(), 0));    // "a"
  EXPECT_FALSE(bitmask_test(matcher.allowed_tokens(), 25));  // "z"
  EXPECT_TRUE(bitmask_test(matcher.allowed_tokens(), 26));   // "aaa"
}

}  // namespace
}  // namespace minimax
