// Strings with minLength / maxLength are one counted repetition in the grammar, whose count the
// matcher carries in its stack. Checked by brute force: every short document over a small alphabet
// against the independent validator (schema_samples.h), every token mask along random generations
// against a byte-by-byte walk of each token, and single strings against the grammar the bounds used
// to unroll into (min copies of the character, then max - min nested optionals), on documents and
// on masks. Bounds 0, 1, min = max and strings nested in arrays and objects are all covered.
#include <gtest/gtest.h>

#include <random>

#include "schema_samples.h"
#include "serve/json_schema_grammar.h"
#include "text/grammar/char_class.h"
#include "text/grammar/grammar_matcher.h"

namespace minimax {
namespace {

using testing::OJson;

const char* const kSchemas[] = {
    R"({"type":"string","maxLength":0})",
    R"({"type":"string","maxLength":1})",
    R"({"type":"string","minLength":1,"maxLength":1})",
    R"({"type":"string","minLength":2,"maxLength":2})",
    R"({"type":"string","minLength":1,"maxLength":4})",
    R"({"type":"string","minLength":3})",
    R"({"type":"array","items":{"type":"string","minLength":1,"maxLength":2},"minItems":1,
        "maxItems":3})",
    R"({"type":"array","items":{"type":"array","items":{"type":"string","maxLength":1},
        "maxItems":2},"maxItems":2})",
    R"({"type":"object","properties":{"a":{"type":"string","maxLength":3},
        "b":{"type":"array","items":{"type":"string","minLength":2,"maxLength":2}}},
        "required":["a"],"additionalProperties":false})",
};

// What the grammar of a lone string with these bounds was before counting: `"`, min copies of a
// character, then (c (c (c)?)?)? nested max - min deep, then `"`.
Grammar unrolled_string_grammar(int min, int max) {
  GrammarBuilder b;
  const int32_t c = char_class_rule(b, CharClass::any(), TextEncoding{}, true);
  ElementSequence body;
  for (int i = 0; i < min; ++i) body.push_back(GrammarBuilder::ref(c));
  if (max < 0) {
    body.push_back(GrammarBuilder::ref(b.star("more", {GrammarBuilder::ref(c)})));
  } else if (max > min) {
    int32_t tail = b.optional("tail", {GrammarBuilder::ref(c)});
    for (int i = min + 1; i < max; ++i)
      tail = b.optional("tail", {GrammarBuilder::ref(c), GrammarBuilder::ref(tail)});
    body.push_back(GrammarBuilder::ref(tail));
  }
  const int32_t root = b.choice("string", {concat(concat({b.byte('"')}, body), {b.byte('"')})});
  return b.build(root);
}

bool accepted(GrammarAutomaton& a, const std::string& text) {
  int32_t s = a.start();
  for (char c : text)
    if (s != GrammarAutomaton::kDead) s = a.next(s, static_cast<uint8_t>(c));
  return s != GrammarAutomaton::kDead && a.accepting(s);
}

// Every concatenation of up to `n` pieces.
void for_each_text(const std::vector<std::string>& pieces, int n,
                   const std::function<void(const std::string&)>& fn, std::string prefix = "") {
  fn(prefix);
  if (n == 0) return;
  for (const std::string& p : pieces) for_each_text(pieces, n - 1, fn, prefix + p);
}

// The grammar writes compact JSON, but a string may use any escape: \u00e9 for é.
std::string without_escapes(std::string text) {
  for (size_t at; (at = text.find("\\u00e9")) != std::string::npos;)
    text.replace(at, 6, "\xc3\xa9");
  return text;
}

TEST(BoundedStringGrammar, AcceptsExactlyWhatTheValidatorAccepts) {
  // Characters of one, two and six bytes, an escape, quotes and the punctuation around them;
  // whole strings as single pieces so that arrays and objects fit in a few pieces.
  const std::vector<std::string> chars = {"\"", "a", "\xc3\xa9", "\\n", "\\u00e9"};
  const std::vector<std::string> arrays = {"\"",     "a", "\xc3\xa9", "\"\"", "\"a\"",
                                           "\"aa\"", "[", "]",        ","};
  const std::vector<std::string> objects = {"{",    "}",      "\"a\":", "\"b\":", "\"", "a",
                                            "\"\"", "\"aa\"", "[",      "]",      ","};
  for (const char* text : kSchemas) {
    const OJson schema = OJson::parse(text);
    SCOPED_TRACE(schema.dump());
    GrammarAutomaton a(std::make_shared<const Grammar>(json_schema_grammar(schema)));
    const bool string = schema["type"] == "string", array = schema["type"] == "array";
    int valid = 0, documents = 0;
    for_each_text(string  ? chars
                  : array ? arrays
                          : objects,
                  string  ? 6
                  : array ? 5
                          : 4,
                  [&](const std::string& doc) {
                    bool expected = false;
                    if (OJson::accept(doc)) {
                      const OJson v = OJson::parse(doc);
                      expected =
                          v.dump() == without_escapes(doc) && testing::validates(v, schema, schema);
                    }
                    ASSERT_EQ(accepted(a, doc), expected) << doc;
                    valid += expected;
                    ++documents;
                  });
    EXPECT_GE(valid, 1);
    EXPECT_GT(documents, 5000);
  }
}

TEST(BoundedStringGrammar, MatchesTheUnrolledGrammar) {
  const std::vector<std::string> pieces = {"\"", "a", "\xc3\xa9", "\\n", "\\\"", "\xc3", "x\"y"};
  for (auto [min, max] : std::vector<std::pair<int, int>>{
           {0, 0}, {0, 1}, {1, 1}, {2, 2}, {0, 3}, {1, 4}, {3, 5}, {2, -1}, {0, -1}}) {
    SCOPED_TRACE(::testing::Message() << "minLength " << min << " maxLength " << max);
    OJson schema = {{"type", "string"}, {"minLength", min}};
    if (max >= 0) schema["maxLength"] = max;
    GrammarAutomaton counted(std::make_shared<const Grammar>(json_schema_grammar(schema)));
    GrammarAutomaton unrolled(std::make_shared<const Grammar>(unrolled_string_grammar(min, max)));
    for_each_text(pieces, 6, [&](const std::string& doc) {
      ASSERT_EQ(accepted(counted, doc), accepted(unrolled, doc)) << doc;
    });
  }
}

// A vocabulary where the trie walk meets every case: ASCII runs longer and shorter than the
// characters left (subtrees taken whole, cut by length, or walked), escapes, quotes inside and at
// the end of tokens, two-byte characters and a lone lead byte, and the JSON punctuation.
std::vector<std::string> vocabulary() {
  std::vector<std::string> tokens;
  for (int c = 0x20; c < 0x7f; ++c) tokens.push_back(std::string(1, static_cast<char>(c)));
  for (int n = 2; n <= 9; ++n) tokens.push_back(std::string(n, 'a'));
  for (const char* t : {"ab",        "abc",       "b a",          "\\n",      "\\\"",
                        "\\u00e9",   "\\u",       "a\"",          "ab\"",     "\",",
                        "\"]",       "\"}",       "\",\"",        "\"],[\"",  "[\"",
                        "[[\"",      "{\"a\":\"", "\",\"b\":[\"", "\xc3\xa9", "\xc3\xa9\xc3\xa9",
                        "a\xc3\xa9", "\xc3",      "\xa9",         "\n",       "aa\"]",
                        "\"]]"})
    tokens.push_back(t);
  tokens.push_back("<end>");
  return tokens;
}

TEST(BoundedStringGrammar, MasksEqualATokenByTokenWalk) {
  const std::vector<std::string> tokens = vocabulary();
  const int32_t end = static_cast<int32_t>(tokens.size()) - 1;
  auto trie = std::make_shared<const TokenTrie>(
      tokens, std::unordered_map<std::string, int32_t>{{"<end>", end}});
  std::mt19937 rng(5);
  int steps = 0;
  for (const char* text : kSchemas) {
    const OJson schema = OJson::parse(text);
    SCOPED_TRACE(schema.dump());
    auto grammar = std::make_shared<const Grammar>(json_schema_grammar(schema));
    // A lone string is also checked against the unrolled grammar, token by token.
    std::shared_ptr<const Grammar> unrolled;
    if (schema["type"] == "string")
      unrolled = std::make_shared<const Grammar>(unrolled_string_grammar(
          schema.value("minLength", 0),
          schema.contains("maxLength") ? schema["maxLength"].get<int>() : -1));
    for (int round = 0; round < 12; ++round) {
      GrammarMatcher matcher(grammar, trie, {end});
      GrammarAutomaton reference(grammar);
      std::optional<GrammarAutomaton> old;
      if (unrolled) old.emplace(unrolled);
      int32_t state = reference.start(), old_state = old ? old->start() : 0;
      std::string doc;
      for (int step = 0; step < 30 && !matcher.finished(); ++step, ++steps) {
        const TokenBitmask& mask = matcher.allowed_tokens();
        std::vector<int32_t> allowed;
        for (int32_t t = 0; t < trie->vocab_size(); ++t) {
          bool ok = t == end && reference.accepting(state);
          if (t != end) {
            int32_t s = state;
            for (char c : tokens[t])
              if (s != GrammarAutomaton::kDead) s = reference.next(s, static_cast<uint8_t>(c));
            ok = s != GrammarAutomaton::kDead;
          }
          ASSERT_EQ(bitmask_test(mask, t), ok) << "token '" << tokens[t] << "' after " << doc;
          if (old) {
            bool old_ok = t == end && old->accepting(old_state);
            if (t != end) {
              int32_t s = old_state;
              for (char c : tokens[t])
                if (s != GrammarAutomaton::kDead) s = old->next(s, static_cast<uint8_t>(c));
              old_ok = s != GrammarAutomaton::kDead;
            }
            ASSERT_EQ(ok, old_ok) << "token '" << tokens[t] << "' after " << doc;
          }
          if (ok) allowed.push_back(t);
        }
        ASSERT_FALSE(allowed.empty()) << doc;
        // Mostly long tokens, so that strings reach their bounds.
        std::sort(allowed.begin(), allowed.end(),
                  [&](int32_t x, int32_t y) { return tokens[x].size() > tokens[y].size(); });
        const int32_t pick = allowed[rng() % std::min<size_t>(allowed.size(), 1 + rng() % 4)];
        ASSERT_TRUE(matcher.accept_token(pick));
        if (pick == end) break;
        for (char c : tokens[pick]) {
          state = reference.next(state, static_cast<uint8_t>(c));
          if (old) old_state = old->next(old_state, static_cast<uint8_t>(c));
        }
        doc += tokens[pick];
      }
    }
  }
  EXPECT_GT(steps, 400);
}

TEST(BoundedStringGrammar, GrammarSizeDoesNotGrowWithTheBound) {
  const Grammar small = json_schema_grammar(OJson::parse(R"({"type":"string","maxLength":2})"));
  const Grammar large =
      json_schema_grammar(OJson::parse(R"({"type":"string","minLength":7,"maxLength":4096})"));
  EXPECT_EQ(small.rules.size(), large.rules.size());
  ASSERT_EQ(large.repeats.size(), 1u);
  EXPECT_EQ(large.repeats[0].min, 7);
  EXPECT_EQ(large.repeats[0].max, 4096);
  // And the automaton does not grow with it either: a state per character written.
  GrammarAutomaton a(std::make_shared<const Grammar>(large));
  int32_t s = a.next(a.start(), '"');
  for (int i = 0; i < 100; ++i) s = a.next(s, 'x');
  EXPECT_FALSE(a.accepting(s));
  EXPECT_LT(a.state_count(), 120u);
  EXPECT_TRUE(a.accepting(a.next(s, '"')));
}

}  // namespace
}  // namespace minimax
