// JSON Schema → grammar (text/grammar/grammar.h) for structured outputs and tool arguments: the
// grammar produces compact JSON (no whitespace) that validates against the schema.
//
// Supported: type (one or a list), enum, const, properties (generated in their declared order),
// required, additionalProperties (false, or a schema for objects without properties; alongside
// properties only the declared ones are generated, which is always valid), items, prefixItems,
// minItems, maxItems, anyOf, allOf with one entry, local $ref ("#/$defs/..",
// "#/definitions/..", recursion allowed), minLength / maxLength, pattern (text/grammar/
// regex_grammar.h), format date, time, date-time and uuid, minimum / exclusiveMinimum 0 or 1 on
// integers and minimum 0 on numbers, and the annotations (title, description, default, examples,
// $schema, $id, $comment, deprecated, readOnly, writeOnly). Anything else throws SchemaError
// naming the schema path of the keyword (e.g. "properties.age.maximum").
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/error.h"
#include "text/grammar/char_class.h"
#include "text/grammar/grammar.h"

namespace minimax {

// what() says what is wrong with the keyword at path().
class SchemaError : public Error {
 public:
  SchemaError(std::string path, const std::string& message)
      : Error(message), path_(std::move(path)) {}
  // Relative to the schema's root, dot-separated ("" = the root itself).
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class JsonSchemaCompiler {
 public:
  // Schemas nest (subschemas inside subschemas, $refs followed) at most this deep: compiling
  // recurses once per level, and a request must not be able to exhaust the stack with a schema
  // flat as JSON but deep through $ref (docs/api.md "Limits").
  static constexpr int kMaxSchemaDepth = 64;

  // `root` is where local $refs resolve; it must outlive the compiler.
  JsonSchemaCompiler(GrammarBuilder& builder, const nlohmann::ordered_json& root);

  // One level of schema nesting, held while a subschema is compiled; SchemaError naming `path`
  // past kMaxSchemaDepth.
  class Level {
   public:
    Level(int& depth, const std::string& path);
    ~Level() { --depth_; }
    Level(const Level&) = delete;
    Level& operator=(const Level&) = delete;

   private:
    int& depth_;
  };
  Level enter(const std::string& path) { return Level(depth_, path); }

  // The rule for a JSON value valid under `schema`, found at `path`.
  int32_t value(const nlohmann::ordered_json& schema, const std::string& path);
  // The rule for any JSON value, and for any JSON object.
  int32_t any_value();
  int32_t any_object();
  // The characters of a string valid under the string keywords of `schema` (minLength,
  // maxLength, pattern, format, enum / const of strings), written as `encoding` says, without
  // quotes: JSON string content, or raw text (tool-call values).
  int32_t string_body(const nlohmann::ordered_json& schema, const std::string& path,
                      const TextEncoding& encoding);

  // SchemaError when `schema` is not an object or boolean or uses a keyword outside the subset.
  void check_keywords(const nlohmann::ordered_json& schema, const std::string& path) const;
  // The types a schema object names ("type", one or a list), else the one its keywords imply
  // (properties → object, items → array, pattern → string...), else none.
  static std::vector<std::string> types_of(const nlohmann::ordered_json& schema,
                                           const std::string& path);

  // The schema a $ref (or a schema without one) stands for; SchemaError for a ref that does not
  // resolve locally.
  const nlohmann::ordered_json& resolve(const nlohmann::ordered_json& schema,
                                        const std::string& path) const;

 private:
  int32_t typed_value(const nlohmann::ordered_json& schema, const std::string& type,
                      const std::string& path);
  int32_t object_value(const nlohmann::ordered_json& schema, const std::string& path);
  int32_t array_value(const nlohmann::ordered_json& schema, const std::string& path);
  int32_t integer_value(const nlohmann::ordered_json& schema, const std::string& path);
  int32_t number_value(const nlohmann::ordered_json& schema, const std::string& path);
  int32_t literal_values(const nlohmann::ordered_json& values, const nlohmann::ordered_json& schema,
                         const std::string& path);
  int32_t json_string_rule(const nlohmann::ordered_json& schema, const std::string& path);

  GrammarBuilder& b_;
  const nlohmann::ordered_json& root_;
  std::map<std::string, int32_t> ref_rules_;  // by $ref text, so recursive refs terminate
  int32_t any_value_ = -1, any_object_ = -1, any_string_ = -1;
  int depth_ = 0;  // Levels alive
};

// A whole grammar: a value of `schema` (json_schema), or any JSON object (json_object).
// SchemaError for anything the schema asks beyond the subset or the limits.
Grammar json_schema_grammar(const nlohmann::ordered_json& schema);
Grammar json_object_grammar();

// Joins a schema path and a key ("a" + "b" → "a.b"; "" + "b" → "b").
std::string schema_path(const std::string& path, const std::string& key);

// Throws SchemaError for the schema at `path` (json_schema_grammar.cc and json_schema_types.cc).
[[noreturn]] void throw_schema_error(const std::string& path, const std::string& message);

}  // namespace minimax
