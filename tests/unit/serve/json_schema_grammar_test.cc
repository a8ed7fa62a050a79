// JSON Schema → grammar: hand-picked schemas, refusals naming the keyword's path, and a property
// test over random schemas in both directions: every sentence the grammar produces is JSON valid
// under the schema, and every valid value written in the canonical form (compact, properties in
// declared order) is accepted.
#include "serve/json_schema_grammar.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "schema_samples.h"
#include "text/bpe_tokenizer.h"
#include "text/grammar/grammar_matcher.h"

namespace minimax {
namespace {

using testing::OJson;

bool accepts(const OJson& schema, std::string_view text) {
  GrammarAutomaton a(std::make_shared<const Grammar>(json_schema_grammar(schema)));
  int32_t s = a.start();
  for (char c : text) {
    s = a.next(s, static_cast<uint8_t>(c));
    if (s == GrammarAutomaton::kDead) return false;
  }
  return a.accepting(s);
}

std::string refusal_path(const OJson& schema) {
  try {
    json_schema_grammar(schema);
  } catch (const SchemaError& e) {
    return e.path();
  }
  return "(accepted)";
}

TEST(JsonSchemaGrammar, RequiredAndOptionalPropertiesInOrder) {
  const OJson schema = OJson::parse(R"({"type":"object","properties":{
      "a":{"type":"integer"},"b":{"type":"string"},"c":{"type":"boolean"}},
      "required":["a","c"],"additionalProperties":false})");
  EXPECT_TRUE(accepts(schema, R"({"a":1,"c":true})"));
  EXPECT_TRUE(accepts(schema, R"({"a":-12,"b":"x\"y","c":false})"));
  EXPECT_FALSE(accepts(schema, R"({"c":true})"));
  EXPECT_FALSE(accepts(schema, R"({"a":1})"));
  EXPECT_FALSE(accepts(schema, R"({"a":1.5,"c":true})"));
  EXPECT_FALSE(accepts(schema, R"({"a":1,"c":true,"d":1})"));
}

TEST(JsonSchemaGrammar, EnumConstAnyOfArrays) {
  EXPECT_TRUE(accepts(OJson::parse(R"({"enum":["red",2,null]})"), "null"));
  EXPECT_FALSE(accepts(OJson::parse(R"({"enum":["red",2,null]})"), "\"blue\""));
  EXPECT_TRUE(accepts(OJson::parse(R"({"const":{"k":[1]}})"), R"({"k":[1]})"));
  const OJson nullable =
      OJson::parse(R"({"anyOf":[{"type":"string","maxLength":2},{"type":"null"}]})");
  EXPECT_TRUE(accepts(nullable, "\"ab\""));
  EXPECT_FALSE(accepts(nullable, "\"abc\""));
  EXPECT_TRUE(accepts(nullable, "null"));
  const OJson list = OJson::parse(R"({"type":"array","items":{"type":"integer","minimum":0},
                                      "minItems":1,"maxItems":3})");
  EXPECT_FALSE(accepts(list, "[]"));
  EXPECT_TRUE(accepts(list, "[0,12,3]"));
  EXPECT_FALSE(accepts(list, "[0,1,2,3]"));
  EXPECT_FALSE(accepts(list, "[-1]"));
  const OJson tuple = OJson::parse(R"({"prefixItems":[{"type":"string"},{"type":"number"}],
                                       "items":false})");
  EXPECT_TRUE(accepts(tuple, R"(["a",1.5e3])"));
  EXPECT_FALSE(accepts(tuple, R"(["a",1,2])"));
}

TEST(JsonSchemaGrammar, RecursiveRefsAndFormats) {
  const OJson tree = OJson::parse(R"({"$ref":"#/$defs/node","$defs":{"node":{"type":"object",
      "properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},
      "required":["v"]}}})");
  EXPECT_TRUE(accepts(tree, R"({"v":1,"kids":[{"v":2,"kids":[{"v":3}]},{"v":4}]})"));
  EXPECT_FALSE(accepts(tree, R"({"v":1,"kids":[{"kids":[]}]})"));
  EXPECT_TRUE(accepts(OJson::parse(R"({"type":"string","format":"date"})"), "\"2024-02-29\""));
  EXPECT_FALSE(accepts(OJson::parse(R"({"type":"string","format":"date"})"), "\"2024-13-01\""));
  EXPECT_TRUE(accepts(OJson::parse(R"({"type":"string","pattern":"^[A-Z]{2}\\d+$"})"), "\"AB12\""));
}

TEST(JsonSchemaGrammar, JsonObjectIsAnyObject) {
  GrammarAutomaton a(std::make_shared<const Grammar>(json_object_grammar()));
  auto run = [&](std::string_view text) {
    int32_t s = a.start();
    for (char c : text)
      if ((s = a.next(s, static_cast<uint8_t>(c))) == GrammarAutomaton::kDead) return false;
    return a.accepting(s);
  };
  EXPECT_TRUE(run(R"({"a":[1,{"b":null}],"c":"\u00e9"})"));
  EXPECT_TRUE(run("{}"));
  EXPECT_FALSE(run("[1]"));
  EXPECT_FALSE(run("{\"a\":}"));
}

TEST(JsonSchemaGrammar, RefusalsNameTheKeyword) {
  EXPECT_EQ(refusal_path(OJson::parse(
                R"({"type":"object","properties":{"x":{"type":"integer","maximum":3}}})")),
            "properties.x.maximum");
  EXPECT_EQ(refusal_path(OJson::parse(R"({"not":{"type":"string"}})")), "not");
  EXPECT_EQ(refusal_path(OJson::parse(R"j({"type":"object","properties":{"p":{"type":"string",
                                          "pattern":"(?=x)"}}})j")),
            "properties.p.pattern");
  EXPECT_EQ(refusal_path(OJson::parse(R"({"$ref":"#/$defs/missing"})")), "$ref");
  EXPECT_EQ(refusal_path(OJson::parse(R"({"type":"string","format":"email"})")), "format");
  EXPECT_EQ(refusal_path(OJson::parse(R"({"type":"strin"})")), "type");
  EXPECT_EQ(refusal_path(OJson::parse(R"({"type":"array","items":{"oneOf":[{}]}})")),
            "items.oneOf");
  EXPECT_EQ(refusal_path(OJson::parse(R"({"type":"array","maxItems":100000})")), "maxItems");
  EXPECT_EQ(refusal_path(OJson::parse(R"({"type":"object","required":["z"],
                                          "additionalProperties":false})")),
            "required");
  EXPECT_EQ(refusal_path(OJson::parse(R"({"$ref":"#"})")), "");  // a cycle consuming nothing
  EXPECT_EQ(refusal_path(OJson(false)), "");
}

// ---- Property test over random schemas -------------------------------------------------------

struct PatternSample {
  const char* pattern;
  std::vector<std::string> samples;  // strings the pattern matches
};
const std::vector<PatternSample>& patterns() {
  static const std::vector<PatternSample> list{
      {"^[a-z]{1,5}$", {"a", "hello"}}, {"^\\d{3}-\\d{2}$", {"123-45"}},
      {"^(yes|no)$", {"yes", "no"}},    {"ab", {"ab", "xaby", "\"ab\\"}},
      {"^[^\"]+\\.$", {"ok.", "é."}},
  };
  return list;
}

OJson random_schema(std::mt19937& rng, int depth) {
  const int kind = static_cast<int>(rng() % (depth > 2 ? 8 : 11));
  switch (kind) {
    case 0: {
      OJson s = {{"type", "string"}};
      if (rng() % 2) s["minLength"] = rng() % 3;
      if (rng() % 2) s["maxLength"] = s.value("minLength", 0) + rng() % 4;
      return s;
    }
    case 1:
      return {{"type", "string"}, {"pattern", patterns()[rng() % patterns().size()].pattern}};
    case 2: {
      OJson s = {{"type", "integer"}};
      if (rng() % 3 == 0) s["minimum"] = rng() % 2;
      return s;
    }
    case 3:
      return rng() % 2 ? OJson{{"type", "number"}} : OJson{{"type", "number"}, {"minimum", 0}};
    case 4:
      return rng() % 2 ? OJson{{"type", "boolean"}} : OJson{{"type", {"string", "null"}}};
    case 5:
      return {{"enum", {"red", "gr\"een", 3, nullptr, true}}};
    case 6:
      return {{"const", {{"k", {1, "x"}}}}};
    case 7:
      return {{"type", "null"}};
    case 8: {
      OJson s = {{"type", "object"}, {"properties", OJson::object()}, {"required", OJson::array()}};
      const int n = static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i) {
        const std::string key = std::string(1, static_cast<char>('a' + i)) + (i == 2 ? "\"q" : "");
        s["properties"][key] = random_schema(rng, depth + 1);
        if (rng() % 2) s["required"].push_back(key);
      }
      if (rng() % 2) s["additionalProperties"] = false;
      return s;
    }
    case 9: {
      OJson s = {{"type", "array"}, {"items", random_schema(rng, depth + 1)}};
      if (rng() % 2) s["minItems"] = rng() % 3;
      if (rng() % 2) s["maxItems"] = s.value("minItems", 0) + rng() % 3;
      return s;
    }
    default:
      return {{"anyOf", {random_schema(rng, depth + 1), random_schema(rng, depth + 1)}}};
  }
}

std::string random_text(std::mt19937& rng, size_t length) {
  static const std::vector<std::string> pieces{"a", "Z", " ", "\"", "\\", "\n", "é", "€", "😀", "/"};
  std::string out;
  for (size_t i = 0; i < length; ++i) out += pieces[rng() % pieces.size()];
  return out;
}

// A valid value of `schema` in the compiler's canonical form.
OJson random_value(const OJson& schema, std::mt19937& rng) {
  if (schema.contains("anyOf"))
    return random_value(schema["anyOf"][rng() % schema["anyOf"].size()], rng);
  if (schema.contains("const")) return schema["const"];
  if (schema.contains("enum")) return schema["enum"][rng() % schema["enum"].size()];
  std::string type = schema["type"].is_string()
                         ? schema["type"].get<std::string>()
                         : schema["type"][rng() % schema["type"].size()].get<std::string>();
  if (type == "string") {
    if (schema.contains("pattern")) {
      for (const PatternSample& p : patterns())
        if (schema["pattern"] == p.pattern) return p.samples[rng() % p.samples.size()];
    }
    const size_t min = schema.value("minLength", 0);
    const size_t max = schema.value("maxLength", min + 5);
    return random_text(rng, min + rng() % (max - min + 1));
  }
  if (type == "integer") {
    const int64_t v =
        static_cast<int64_t>(rng() % 100000) - (schema.contains("minimum") ? 0 : 50000);
    return std::max<int64_t>(v, schema.value("minimum", -100000));
  }
  if (type == "number") {
    const double v =
        static_cast<double>(rng() % 4000) / 8.0 - (schema.contains("minimum") ? 0 : 250);
    return v;
  }
  if (type == "boolean") return rng() % 2 == 0;
  if (type == "null") return nullptr;
  if (type == "object") {
    OJson v = OJson::object();
    for (auto it = schema["properties"].begin(); it != schema["properties"].end(); ++it) {
      bool required = false;
      for (const OJson& r : schema["required"]) required = required || r == it.key();
      if (required || rng() % 2) v[it.key()] = random_value(it.value(), rng);
    }
    return v;
  }
  const size_t min = schema.value("minItems", 0);
  const size_t max = schema.value("maxItems", min + 3);
  OJson v = OJson::array();
  for (size_t n = min + rng() % (max - min + 1); n > 0; --n)
    v.push_back(random_value(schema["items"], rng));
  return v;
}

TEST(JsonSchemaGrammarProperty, SentencesValidateAndValidValuesAreAccepted) {
  std::mt19937 rng(20261201);
  int sentences = 0, values = 0, mutants = 0;
  for (int round = 0; round < 150; ++round) {
    const OJson schema = random_schema(rng, 0);
    SCOPED_TRACE(schema.dump());
    GrammarAutomaton a(std::make_shared<const Grammar>(json_schema_grammar(schema)));
    for (int k = 0; k < 8; ++k) {
      const std::optional<std::string> text = testing::random_sentence(a, rng, {});
      if (!text) continue;
      OJson parsed;
      ASSERT_NO_THROW(parsed = OJson::parse(*text)) << *text;
      EXPECT_TRUE(testing::validates(parsed, schema, schema)) << *text;
      ++sentences;
    }
    auto accepted = [&](const std::string& text) {
      int32_t s = a.start();
      for (char c : text)
        if (s != GrammarAutomaton::kDead) s = a.next(s, static_cast<uint8_t>(c));
      return s != GrammarAutomaton::kDead && a.accepting(s);
    };
    for (int k = 0; k < 8; ++k) {
      const std::string text = random_value(schema, rng).dump();
      EXPECT_TRUE(accepted(text)) << text;
      ++values;
      // Random edits of a valid text: whatever the grammar still accepts must be valid too.
      static const std::string noise = "{}[]\",:0123456789.-eEtruefalsn \\x\xc3\xa9";
      for (int m = 0; m < 6; ++m) {
        std::string edited = text;
        const size_t at = rng() % (edited.size() + 1);
        const char c = noise[rng() % noise.size()];
        switch (rng() % 3) {
          case 0:
            edited.insert(at, 1, c);
            break;
          case 1:
            if (at < edited.size()) edited.erase(at, 1);
            break;
          default:
            if (at < edited.size()) edited[at] = c;
            break;
        }
        if (!accepted(edited)) continue;
        ++mutants;
        OJson parsed;
        ASSERT_NO_THROW(parsed = OJson::parse(edited)) << edited;
        EXPECT_TRUE(testing::validates(parsed, schema, schema)) << edited;
      }
    }
  }
  EXPECT_GT(sentences, 600);
  EXPECT_EQ(values, 1200);
  EXPECT_GT(mutants, 100);  // edits that stay inside the language were tried too
}

}  // namespace
}  // namespace minimax

namespace minimax {
namespace {

// Masks over a real vocabulary (the bundled model's tokenizer) equal a token-by-token walk, along
// random constrained generations of schema grammars: the trie walk, its shortcuts (dead prefixes,
// subtrees whose bytes loop back to the same state) and the mask cache agree with the definition.
TEST(JsonSchemaGrammarProperty, MasksOverTheBundledVocabularyMatchTokenWalks) {
  const BpeTokenizer tokenizer = BpeTokenizer::from_file(
      std::string(MINIMAX_TEST_DATA) + "/../../models/minimax-m3-tiny/tokenizer.json");
  auto trie = std::make_shared<const TokenTrie>(tokenizer);
  const int32_t end = tokenizer.token_id("[e~[").value();
  std::mt19937 rng(11);
  int steps = 0;
  for (int round = 0; round < 40; ++round) {
    const OJson schema = random_schema(rng, 0);
    SCOPED_TRACE(schema.dump());
    auto grammar = std::make_shared<const Grammar>(json_schema_grammar(schema));
    GrammarMatcher matcher(grammar, trie, {end});
    GrammarAutomaton reference(grammar);
    int32_t state = reference.start();
    std::string text;
    for (int step = 0; step < 40 && !matcher.finished(); ++step, ++steps) {
      const TokenBitmask& mask = matcher.allowed_tokens();
      std::vector<int32_t> allowed;
      for (int32_t t = 0; t < trie->vocab_size(); ++t) {
        const std::string_view bytes = trie->token_bytes(t);
        bool ok = false;
        if (bytes.empty()) {
          ok = t == end && reference.accepting(state);
        } else {
          int32_t s = state;
          for (char c : bytes)
            if (s != GrammarAutomaton::kDead) s = reference.next(s, static_cast<uint8_t>(c));
          ok = s != GrammarAutomaton::kDead;
        }
        ASSERT_EQ(bitmask_test(mask, t), ok) << "token " << t << " after " << text;
        if (ok) allowed.push_back(t);
      }
      ASSERT_FALSE(allowed.empty()) << text;
      const int32_t pick = allowed[rng() % allowed.size()];
      ASSERT_TRUE(matcher.accept_token(pick));
      if (pick == end) break;
      for (char c : trie->token_bytes(pick)) state = reference.next(state, static_cast<uint8_t>(c));
      text += trie->token_bytes(pick);
    }
  }
  EXPECT_GT(steps, 300);
}

}  // namespace
}  // namespace minimax
