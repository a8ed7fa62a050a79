// JSON Schema → grammar (serve/json_schema_grammar.h): the keyword check, $ref, anyOf / allOf,
// enum / const, any JSON value, and the whole-grammar entry points. The rules of each type are in
// json_schema_types.cc.
#include "serve/json_schema_grammar.h"

#include <algorithm>
#include <set>

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

const std::set<std::string>& annotations() {
  static const std::set<std::string> keys{"title",    "description", "default",  "examples",
                                          "$schema",  "$id",         "$comment", "deprecated",
                                          "readOnly", "writeOnly",   "$defs",    "definitions"};
  return keys;
}

const std::set<std::string>& supported() {
  static const std::set<std::string> keys{"type",
                                          "enum",
                                          "const",
                                          "properties",
                                          "required",
                                          "additionalProperties",
                                          "items",
                                          "prefixItems",
                                          "minItems",
                                          "maxItems",
                                          "anyOf",
                                          "allOf",
                                          "$ref",
                                          "minLength",
                                          "maxLength",
                                          "pattern",
                                          "format",
                                          "minimum",
                                          "exclusiveMinimum"};
  return keys;
}

// The schema's keywords other than annotations.
std::vector<std::string> keywords(const Json& schema) {
  std::vector<std::string> out;
  for (auto it = schema.begin(); it != schema.end(); ++it)
    if (!annotations().count(it.key())) out.push_back(it.key());
  return out;
}

bool value_has_type(const Json& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "integer")
    return value.is_number_integer() ||
           (value.is_number_float() &&
            value.get<double>() == static_cast<int64_t>(value.get<double>()));
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  return false;
}

std::vector<std::string> type_names(const Json& schema, const std::string& path) {
  std::vector<std::string> names;
  const Json& type = schema.at("type");
  if (type.is_string()) {
    names.push_back(type.get<std::string>());
  } else if (type.is_array() && !type.empty()) {
    for (const Json& t : type) {
      if (!t.is_string()) throw_schema_error(schema_path(path, "type"), "expected type names");
      names.push_back(t.get<std::string>());
    }
  } else {
    throw_schema_error(schema_path(path, "type"),
                       "expected a type name or a non-empty list of them");
  }
  static const std::set<std::string> known{"string", "integer", "number", "boolean",
                                           "null",   "object",  "array"};
  for (const std::string& n : names)
    if (!known.count(n))
      throw_schema_error(schema_path(path, "type"), fmt::format("unknown type '{}'", n));
  return names;
}

}  // namespace

void throw_schema_error(const std::string& path, const std::string& message) {
  throw SchemaError(path, message);
}

std::string schema_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

JsonSchemaCompiler::JsonSchemaCompiler(GrammarBuilder& builder, const Json& root)
    : b_(builder), root_(root) {}

JsonSchemaCompiler::Level::Level(int& depth, const std::string& path) : depth_(depth) {
  if (depth_ == kMaxSchemaDepth)
    throw_schema_error(path, fmt::format("the schema nests deeper than {} levels (counting each "
                                         "$ref followed); the limit",
                                         kMaxSchemaDepth));
  ++depth_;
}

const Json& JsonSchemaCompiler::resolve(const Json& schema, const std::string& path) const {
  if (!schema.is_object() || !schema.contains("$ref")) return schema;
  const Json& ref = schema["$ref"];
  const std::string where = schema_path(path, "$ref");
  if (!ref.is_string()) throw_schema_error(where, "expected a string");
  const std::string text = ref.get<std::string>();
  if (text.empty() || text[0] != '#')
    throw_schema_error(where, "only local references (#/...) are supported");
  try {
    return root_.at(Json::json_pointer(text.substr(1)));
  } catch (const Json::exception&) {
    throw_schema_error(where, fmt::format("'{}' does not resolve", text));
  }
}

int32_t JsonSchemaCompiler::any_value() {
  if (any_value_ >= 0) return any_value_;
  any_value_ = b_.new_rule("value");
  const int32_t object = any_object();
  const int32_t value = any_value_;
  const int32_t more = b_.star("values", {b_.byte(','), GrammarBuilder::ref(value)});
  const int32_t array = b_.choice("array", {{b_.byte('['), b_.byte(']')},
                                            {b_.byte('['), GrammarBuilder::ref(value),
                                             GrammarBuilder::ref(more), b_.byte(']')}});
  const Json none = Json::object();
  b_.add_alternative(value, {GrammarBuilder::ref(object)});
  b_.add_alternative(value, {GrammarBuilder::ref(array)});
  b_.add_alternative(value, {GrammarBuilder::ref(json_string_rule(none, ""))});
  b_.add_alternative(value, {GrammarBuilder::ref(number_value(none, ""))});
  b_.add_alternative(value, b_.literal("true"));
  b_.add_alternative(value, b_.literal("false"));
  b_.add_alternative(value, b_.literal("null"));
  return value;
}

int32_t JsonSchemaCompiler::any_object() {
  if (any_object_ >= 0) return any_object_;
  any_object_ = b_.new_rule("object");
  const int32_t value = any_value();
  const int32_t member =
      b_.choice("member", {{GrammarBuilder::ref(json_string_rule(Json::object(), "")), b_.byte(':'),
                            GrammarBuilder::ref(value)}});
  const int32_t more = b_.star("members", {b_.byte(','), GrammarBuilder::ref(member)});
  b_.add_alternative(any_object_, {b_.byte('{'), b_.byte('}')});
  b_.add_alternative(any_object_, {b_.byte('{'), GrammarBuilder::ref(member),
                                   GrammarBuilder::ref(more), b_.byte('}')});
  return any_object_;
}

int32_t JsonSchemaCompiler::value(const Json& schema, const std::string& path) {
  const Level level = enter(path);
  if (schema.is_boolean()) {
    if (schema.get<bool>()) return any_value();
    throw_schema_error(path, "the schema false admits no value");
  }
  check_keywords(schema, path);
  const std::vector<std::string> keys = keywords(schema);

  if (schema.contains("$ref")) {
    if (keys.size() > 1)
      throw_schema_error(schema_path(path, "$ref"), "$ref beside other keywords is not supported");
    const std::string ref = schema["$ref"].is_string() ? schema["$ref"].get<std::string>() : "";
    if (auto it = ref_rules_.find(ref); it != ref_rules_.end()) return it->second;
    const Json& target = resolve(schema, path);
    const int32_t rule = b_.new_rule("ref");
    ref_rules_[ref] = rule;
    std::string target_path = ref.size() > 2 ? ref.substr(2) : "";  // "#/$defs/a" → "$defs.a"
    std::replace(target_path.begin(), target_path.end(), '/', '.');
    b_.add_alternative(rule, {GrammarBuilder::ref(value(target, target_path))});
    return rule;
  }
  for (const char* combinator : {"anyOf", "allOf"}) {
    if (!schema.contains(combinator)) continue;
    const std::string where = schema_path(path, combinator);
    if (keys.size() > 1)
      throw_schema_error(where,
                         fmt::format("{} beside other keywords is not supported", combinator));
    const Json& list = schema[combinator];
    if (!list.is_array() || list.empty())
      throw_schema_error(where, "expected a non-empty array of schemas");
    if (std::string(combinator) == "allOf") {
      if (list.size() != 1)
        throw_schema_error(where, "allOf with more than one schema is not supported");
      return value(list[0], schema_path(where, "0"));
    }
    std::vector<ElementSequence> alternatives;
    for (size_t i = 0; i < list.size(); ++i)
      alternatives.push_back(
          {GrammarBuilder::ref(value(list[i], schema_path(where, std::to_string(i))))});
    return b_.choice("anyof", std::move(alternatives));
  }
  if (schema.contains("const")) return literal_values(Json::array({schema["const"]}), schema, path);
  if (schema.contains("enum")) {
    if (!schema["enum"].is_array() || schema["enum"].empty())
      throw_schema_error(schema_path(path, "enum"), "expected a non-empty array");
    return literal_values(schema["enum"], schema, path);
  }
  const std::vector<std::string> types = types_of(schema, path);
  if (types.empty()) return any_value();
  if (types.size() == 1) return typed_value(schema, types[0], path);
  std::vector<ElementSequence> alternatives;
  for (const std::string& t : types)
    alternatives.push_back({GrammarBuilder::ref(typed_value(schema, t, path))});
  return b_.choice("types", std::move(alternatives));
}

void JsonSchemaCompiler::check_keywords(const Json& schema, const std::string& path) const {
  if (schema.is_boolean()) return;
  if (!schema.is_object())
    throw_schema_error(path, fmt::format("expected a schema object, got {}", schema.type_name()));
  for (const std::string& key : keywords(schema))
    if (!supported().count(key)) throw_schema_error(schema_path(path, key), "not supported");
}

std::vector<std::string> JsonSchemaCompiler::types_of(const Json& schema, const std::string& path) {
  if (!schema.is_object()) return {};
  if (schema.contains("type")) return type_names(schema, path);
  if (schema.contains("properties") || schema.contains("required") ||
      schema.contains("additionalProperties"))
    return {"object"};
  if (schema.contains("items") || schema.contains("prefixItems") || schema.contains("minItems") ||
      schema.contains("maxItems"))
    return {"array"};
  if (schema.contains("minLength") || schema.contains("maxLength") || schema.contains("pattern") ||
      schema.contains("format"))
    return {"string"};
  return {};
}

int32_t JsonSchemaCompiler::literal_values(const Json& values, const Json& schema,
                                           const std::string& path) {
  std::vector<std::string> types;
  if (schema.contains("type")) types = type_names(schema, path);
  std::vector<ElementSequence> alternatives;
  for (const Json& v : values) {
    bool fits = types.empty();
    for (const std::string& t : types) fits = fits || value_has_type(v, t);
    if (fits) alternatives.push_back(b_.literal(v.dump()));
  }
  if (alternatives.empty())
    throw_schema_error(schema_path(path, schema.contains("const") ? "const" : "enum"),
                       "no value has the schema's type");
  return b_.choice("literal", std::move(alternatives));
}

int32_t JsonSchemaCompiler::typed_value(const Json& schema, const std::string& type,
                                        const std::string& path) {
  if (type == "string") return json_string_rule(schema, path);
  if (type == "integer") return integer_value(schema, path);
  if (type == "number") return number_value(schema, path);
  if (type == "boolean") return b_.choice("boolean", {b_.literal("true"), b_.literal("false")});
  if (type == "null") return b_.choice("null", {b_.literal("null")});
  if (type == "object") return object_value(schema, path);
  return array_value(schema, path);
}

Grammar json_schema_grammar(const Json& schema) {
  try {
    GrammarBuilder b;
    JsonSchemaCompiler compiler(b, schema);
    return b.build(compiler.value(schema, ""));
  } catch (const SchemaError&) {
    throw;
  } catch (const Error& e) {
    throw_schema_error("", e.what());  // a $ref cycle that consumes nothing, the rule limit
  }
}

Grammar json_object_grammar() {
  GrammarBuilder b;
  JsonSchemaCompiler compiler(b, Json::object());
  return b.build(compiler.any_object());
}

}  // namespace minimax