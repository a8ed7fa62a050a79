// Schema-driven typing of argument text (spec/parsers.md §3.3): the type set of a schema, member
// and item schemas, and the conversion table.
#include <gtest/gtest.h>

#include "base/error.h"
#include "serve/schema_coerce.h"

namespace minimax {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

TEST(SchemaTypes, UnionOfTypeEnumConstAndAlternatives) {
  const json root = json::parse(R"({
    "$defs": {"n": {"type": "number"}},
    "properties": {
      "a": {"type": "string"},
      "b": {"type": ["integer", "null"]},
      "c": {"enum": [1, "x", null, true, 2.5, [1], {"k": 1}]},
      "d": {"anyOf": [{"type": "boolean"}, {"oneOf": [{"$ref": "#/$defs/n"}]}]},
      "e": {"const": "fixed"},
      "f": {"description": "no type"},
      "g": {"type": "Str"},
      "h": {"$ref": "#/$defs/missing"}}})");
  auto types = [&](const char* key) { return schema_types(&root["properties"][key], &root); };
  EXPECT_EQ(types("a"), kTypeString);
  EXPECT_EQ(types("b"), kTypeInteger | kTypeNull);
  EXPECT_EQ(types("c"), kTypeInteger | kTypeString | kTypeNull | kTypeBoolean | kTypeNumber |
                            kTypeArray | kTypeObject);
  EXPECT_EQ(types("d"), kTypeBoolean | kTypeNumber);
  EXPECT_EQ(types("e"), kTypeString);
  EXPECT_EQ(types("f"), 0u);
  EXPECT_EQ(types("g"), kTypeString);
  EXPECT_EQ(types("h"), 0u);
  EXPECT_EQ(schema_types(nullptr, nullptr), 0u);
}

TEST(SchemaTypes, SelfReferenceTerminates) {
  const json root = json::parse(R"({"$defs": {"loop": {"$ref": "#/$defs/loop"}},
                                    "anyOf": [{"$ref": "#/$defs/loop"}]})");
  EXPECT_EQ(schema_types(&root, &root), 0u);
}

TEST(SchemaLookup, PropertiesItemsAndAlternatives) {
  const json root = json::parse(R"({
    "type": "object",
    "$defs": {"point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "string"}]}},
    "properties": {
      "p": {"$ref": "#/$defs/point"},
      "free": {"type": "object", "additionalProperties": {"type": "integer"}},
      "opt": {"anyOf": [{"type": "null"}, {"type": "object", "properties": {"x": {"type": "boolean"}}}]},
      "list": {"type": "array", "items": {"type": "integer"}}}})");
  const json* p = property_schema(&root, "p", &root);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(schema_types(item_schema(p, 0, &root), &root), kTypeNumber);
  EXPECT_EQ(schema_types(item_schema(p, 1, &root), &root), kTypeString);
  EXPECT_EQ(schema_types(item_schema(p, 5, &root), &root), kTypeString);  // the last prefix item
  EXPECT_EQ(
      schema_types(property_schema(property_schema(&root, "free", &root), "any", &root), &root),
      kTypeInteger);
  EXPECT_EQ(schema_types(property_schema(property_schema(&root, "opt", &root), "x", &root), &root),
            kTypeBoolean);
  EXPECT_EQ(schema_types(item_schema(property_schema(&root, "list", &root), 3, &root), &root),
            kTypeInteger);
  EXPECT_EQ(property_schema(&root, "absent", &root), nullptr);
}

struct CoerceCase {
  const char* schema;  // JSON, "null" for none
  const char* text;
  const char* expected;  // JSON
};

void PrintTo(const CoerceCase& c, std::ostream* os) { *os << c.schema << " <- '" << c.text << "'"; }

class Coerce : public ::testing::TestWithParam<CoerceCase> {};

TEST_P(Coerce, Table) {
  const CoerceCase& c = GetParam();
  const json schema = json::parse(c.schema);
  const ojson value = coerce_value(c.text, schema.is_null() ? nullptr : &schema, &schema);
  EXPECT_EQ(value, ojson::parse(c.expected)) << "got " << value.dump();
  // The kind as well as the value (1 and 1.0 compare equal in nlohmann::json).
  EXPECT_EQ(value.is_number_float(), ojson::parse(c.expected).is_number_float())
      << "got " << value.dump();
}

INSTANTIATE_TEST_SUITE_P(
    Rules, Coerce,
    ::testing::Values(
        // Strings are the text as given (M3 leaves keep their spacing; M2 trims beforehand).
        CoerceCase{R"({"type":"string"})", " a b ", R"(" a b ")"},
        CoerceCase{R"({"type":"string"})", "null", R"("null")"},
        CoerceCase{R"({"type":"string"})", "42", R"("42")"},
        CoerceCase{R"({"type":["string","null"]})", "Null", "null"},
        CoerceCase{R"({"type":["string","null"]})", "nil", R"("nil")"},
        CoerceCase{R"({"type":["string","null"]})", "", R"("")"},
        CoerceCase{R"({"type":["string","integer"]})", "007", "7"},  // vLLM's order
        // Integers: Python int() (leading zeros, sign, surrounding space).
        CoerceCase{R"({"type":"integer"})", "018956", "18956"},
        CoerceCase{R"({"type":"integer"})", " -7 ", "-7"},
        CoerceCase{R"({"type":"integer"})", "+3", "3"},
        CoerceCase{R"({"type":"integer"})", "18446744073709551615", "18446744073709551615"},
        CoerceCase{R"({"type":"integer"})", "1.0", "1.0"},  // not an int: JSON fallback
        CoerceCase{R"({"type":"integer"})", "abc", R"("abc")"},
        CoerceCase{R"({"type":"integer"})", "null", "null"},  // JSON fallback
        CoerceCase{R"({"type":["integer","null"]})", "", "null"},
        // Numbers: Python float(), integral values as integers, no inf/nan.
        CoerceCase{R"({"type":"number"})", "0.5", "0.5"},
        CoerceCase{R"({"type":"number"})", "3.0", "3"},
        CoerceCase{R"({"type":"number"})", "1e3", "1000"},
        CoerceCase{R"({"type":"number"})", ".25", "0.25"},
        CoerceCase{R"({"type":"number"})", "-5.", "-5"},
        CoerceCase{R"({"type":"number"})", "1.5e-3", "0.0015"},
        CoerceCase{R"({"type":"number"})", "1e30", "1e30"},
        CoerceCase{R"({"type":"number"})", "inf", R"("inf")"},
        CoerceCase{R"({"type":"number"})", "1e999", R"("1e999")"},
        CoerceCase{R"({"type":"number"})", "0x10", R"("0x10")"},
        // Booleans.
        CoerceCase{R"({"type":"boolean"})", "True", "true"},
        CoerceCase{R"({"type":"boolean"})", "yes", "true"},
        CoerceCase{R"({"type":"boolean"})", "on", "true"},
        CoerceCase{R"({"type":"boolean"})", "1", "true"},
        CoerceCase{R"({"type":"boolean"})", "OFF", "false"},
        CoerceCase{R"({"type":"boolean"})", "0", "false"},
        CoerceCase{R"({"type":"boolean"})", "maybe", R"("maybe")"},
        // Objects and arrays are JSON of the right kind.
        CoerceCase{R"({"type":"object"})", R"({"a": [1, {"b": null}]})", R"({"a":[1,{"b":null}]})"},
        CoerceCase{R"({"type":"object"})", "[1]", "[1]"},  // wrong kind: JSON fallback
        CoerceCase{R"({"type":"object"})", "", "{}"}, CoerceCase{R"({"type":"array"})", "", "[]"},
        CoerceCase{R"({"type":"array"})", R"(["x", 2])", R"(["x",2])"},
        CoerceCase{R"({"type":"array"})", "not json", R"("not json")"},
        // Unions try integer, number, boolean, object, array, string in that order.
        CoerceCase{R"({"type":["integer","string"]})", "12", "12"},
        CoerceCase{R"({"type":["boolean","string"]})", "yes", "true"},
        CoerceCase{R"({"anyOf":[{"type":"integer"},{"type":"string"}]})", "abc", R"("abc")"},
        CoerceCase{R"({"anyOf":[{"type":"number"},{"type":"null"}]})", "NULL", "null"},
        CoerceCase{R"({"oneOf":[{"type":"object"},{"type":"array"}]})", "[3]", "[3]"},
        CoerceCase{R"({"enum":[1,2,3]})", "2", "2"},
        CoerceCase{R"({"enum":["a","b"]})", "1", R"("1")"},
        CoerceCase{R"({"type":"null"})", "null", "null"},
        // No schema at all (no tools, an undeclared tool or parameter): the text, as vLLM.
        CoerceCase{"null", "5", R"("5")"}, CoerceCase{"null", " [1, 2] ", R"(" [1, 2] ")"},
        CoerceCase{"null", "true", R"("true")"}, CoerceCase{"null", "null", R"("null")"},
        // A schema without type information: the JSON the text spells, else the text.
        CoerceCase{"{}", "42", "42"}, CoerceCase{"{}", " [1, 2] ", "[1,2]"},
        CoerceCase{"{}", "true", "true"}, CoerceCase{"{}", "null", "null"},
        CoerceCase{"{}", "0042", R"("0042")"}, CoerceCase{"{}", " hello ", R"(" hello ")"},
        CoerceCase{R"({"description":"x"})", R"("quoted")", R"("quoted")"}));

TEST(ToolSchemas, ReadsOpenAiToolsAndBareFunctions) {
  const json tools = json::parse(R"([
    {"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}},
    {"name": "b", "parameters": {"type": "object", "properties": {}}},
    {"type": "function", "function": {"name": "c"}}])");
  const ToolSchemas schemas(tools);
  ASSERT_NE(schemas.parameters("a"), nullptr);
  EXPECT_EQ(schemas.parameters("a")->at("type"), "object");
  ASSERT_NE(schemas.parameters("b"), nullptr);
  EXPECT_EQ(schemas.parameters("c"), nullptr);
  EXPECT_EQ(schemas.parameters("d"), nullptr);
  EXPECT_EQ(ToolSchemas(json()).parameters("a"), nullptr);
}

TEST(ToolSchemas, ErrorsNameTheEntry) {
  auto message = [](const char* tools) {
    try {
      ToolSchemas schemas(json::parse(tools));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(R"({"name": "x"})"), "tools: expected an array, got object");
  EXPECT_EQ(message(R"([1])"), "tools[0]: expected an object, got number");
  EXPECT_EQ(message(R"([{"function": {"name": 3}}])"), "tools[0].function.name: expected a string");
  EXPECT_EQ(message(R"([{"type": "function", "function": []}])"),
            "tools[0].function: expected an object, got array");
}

}  // namespace
}  // namespace minimax
