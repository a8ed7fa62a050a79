// Turns the text of a tool-call argument into a JSON value using the tool's JSON schema
// (spec/parsers.md §3.3). The model writes every value as text; the schema says what it means.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace minimax {

// JSON types a schema admits, as bits.
enum SchemaType : unsigned {
  kTypeString = 1,
  kTypeInteger = 2,
  kTypeNumber = 4,
  kTypeBoolean = 8,
  kTypeObject = 16,
  kTypeArray = 32,
  kTypeNull = 64,
};

// The parameter schemas of a request's tools, by function name. Pointers returned by the lookups
// stay valid while the ToolSchemas lives.
class ToolSchemas {
 public:
  ToolSchemas() = default;
  // `tools` is the OpenAI `tools` array ([{"type":"function","function":{"name",
  // "parameters"}}], bare function objects accepted too); null means none. Throws Error naming
  // the entry at fault (not an array, a tool without a string name).
  explicit ToolSchemas(const nlohmann::json& tools);

  // The tool's `parameters` schema, or nullptr for an unknown tool or one without parameters.
  const nlohmann::json* parameters(std::string_view tool_name) const;

 private:
  std::map<std::string, nlohmann::json, std::less<>> parameters_;
};

// The types `schema` admits: `type` (a name or a list; string/str/text, integer/int,
// number/float, boolean/bool, object/dict, array/list, null), the types of `enum` and `const`
// values, and recursively anyOf/oneOf/allOf. Local "$ref"s ("#/...") resolve against `root`.
// 0 for a missing schema or one that says nothing about type.
unsigned schema_types(const nlohmann::json* schema, const nlohmann::json* root);

// The schema of member `key` of an object schema (properties, else additionalProperties), or of
// element `index` of an array schema (prefixItems, additionalItems, items), looking through $ref
// and anyOf/oneOf/allOf alternatives; nullptr when the schema does not say.
const nlohmann::json* property_schema(const nlohmann::json* schema, std::string_view key,
                                      const nlohmann::json* root);
const nlohmann::json* item_schema(const nlohmann::json* schema, size_t index,
                                  const nlohmann::json* root);

// The value of argument text `text` under `schema`:
// - no schema (nullptr: no tools in the request, an undeclared tool or parameter): the text as a
//   string, unchanged (vLLM's behaviour: "5" stays "5");
// - a schema with no type information: the JSON the text spells (after trimming whitespace) if
//   it is valid JSON, else the text as a string;
// - null admitted and the trimmed text is "null" (any case), or empty with no string admitted:
//   null;
// - otherwise the first of integer, number, boolean, object, array, string that the schema
//   admits and the trimmed text reads as (vLLM's order; integers may have leading zeros; an
//   integral number is an integer; booleans are true/1/yes/on and false/0/no/off; objects and
//   arrays are JSON of that kind, an empty text the empty one); a string is the text unchanged;
// - failing all: the JSON the text spells, else the text as a string.
// "none" and "nil" are ordinary strings.
nlohmann::ordered_json coerce_value(std::string_view text, const nlohmann::json* schema,
                                    const nlohmann::json* root);

// Whitespace trimmed at both ends (ASCII space, tab, CR, LF, FF, VT).
std::string_view trim_space(std::string_view text);

}  // namespace minimax
