// JSON Schema → grammar (serve/json_schema_grammar.h).
#include "serve/json_schema_grammar.h"

#include <algorithm>
#include <set>

#include "text/grammar/regex_grammar.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kMaxStringLength = 4096;  // minLength / maxLength bounds expanded into rules
constexpr int kMaxItems = 1000;         // minItems / maxItems likewise
constexpr size_t kMaxRules = 100000;    // bounds the work a schema can cause

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

[[noreturn]] void refuse(const std::string& path, const std::string& message) {
  throw SchemaError(path, message);
}

// The schema's keywords other than annotations.
std::vector<std::string> keywords(const Json& schema) {
  std::vector<std::string> out;
  for (auto it = schema.begin(); it != schema.end(); ++it)
    if (!annotations().count(it.key())) out.push_back(it.key());
  return out;
}

int bound(const Json& schema, const char* key, int limit, const std::string& path) {
  const Json& v = schema.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < 0)
    refuse(schema_path(path, key), "expected a non-negative integer");
  if (v.get<int64_t>() > limit)
    refuse(schema_path(path, key), fmt::format("values above {} are not supported", limit));
  return v.get<int>();
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
      if (!t.is_string()) refuse(schema_path(path, "type"), "expected type names");
      names.push_back(t.get<std::string>());
    }
  } else {
    refuse(schema_path(path, "type"), "expected a type name or a non-empty list of them");
  }
  static const std::set<std::string> known{"string", "integer", "number", "boolean",
                                           "null",   "object",  "array"};
  for (const std::string& n : names)
    if (!known.count(n)) refuse(schema_path(path, "type"), fmt::format("unknown type '{}'", n));
  return names;
}

}  // namespace

std::string schema_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

JsonSchemaCompiler::JsonSchemaCompiler(GrammarBuilder& builder, const Json& root)
    : b_(builder), root_(root) {}

const Json& JsonSchemaCompiler::resolve(const Json& schema, const std::string& path) const {
  if (!schema.is_object() || !schema.contains("$ref")) return schema;
  const Json& ref = schema["$ref"];
  const std::string where = schema_path(path, "$ref");
  if (!ref.is_string()) refuse(where, "expected a string");
  const std::string text = ref.get<std::string>();
  if (text.empty() || text[0] != '#') refuse(where, "only local references (#/...) are supported");
  try {
    return root_.at(Json::json_pointer(text.substr(1)));
  } catch (const Json::exception&) {
    refuse(where, fmt::format("'{}' does not resolve", text));
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
  if (schema.is_boolean()) {
    if (schema.get<bool>()) return any_value();
    refuse(path, "the schema false admits no value");
  }
  check_keywords(schema, path);
  const std::vector<std::string> keys = keywords(schema);

  if (schema.contains("$ref")) {
    if (keys.size() > 1)
      refuse(schema_path(path, "$ref"), "$ref beside other keywords is not supported");
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
      refuse(where, fmt::format("{} beside other keywords is not supported", combinator));
    const Json& list = schema[combinator];
    if (!list.is_array() || list.empty()) refuse(where, "expected a non-empty array of schemas");
    if (std::string(combinator) == "allOf") {
      if (list.size() != 1) refuse(where, "allOf with more than one schema is not supported");
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
      refuse(schema_path(path, "enum"), "expected a non-empty array");
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
    refuse(path, fmt::format("expected a schema object, got {}", schema.type_name()));
  for (const std::string& key : keywords(schema))
    if (!supported().count(key)) refuse(schema_path(path, key), "not supported");
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
    refuse(schema_path(path, schema.contains("const") ? "const" : "enum"),
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

int32_t JsonSchemaCompiler::json_string_rule(const Json& schema, const std::string& path) {
  const bool plain = !schema.contains("minLength") && !schema.contains("maxLength") &&
                     !schema.contains("pattern") && !schema.contains("format");
  if (plain && any_string_ >= 0) return any_string_;
  const int32_t body = string_body(schema, path, TextEncoding{});
  const int32_t rule =
      b_.choice("string", {{b_.byte('"'), GrammarBuilder::ref(body), b_.byte('"')}});
  if (plain) any_string_ = rule;
  return rule;
}

int32_t JsonSchemaCompiler::string_body(const Json& schema, const std::string& path,
                                        const TextEncoding& encoding) {
  const bool lengths = schema.contains("minLength") || schema.contains("maxLength");
  std::string pattern;
  std::string pattern_key = "pattern";
  if (schema.contains("format")) {
    const Json& format = schema["format"];
    const std::string where = schema_path(path, "format");
    static const std::map<std::string, std::string> formats{
        {"date", R"(^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$)"},
        {"time", R"(^([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$)"},
        {"date-time",
         R"(^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$)"},
        {"uuid", R"(^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$)"}};
    if (!format.is_string() || !formats.count(format.get<std::string>()))
      refuse(where, "only the formats date, time, date-time and uuid are supported");
    if (schema.contains("pattern") || lengths)
      refuse(where, "format together with pattern, minLength or maxLength is not supported");
    pattern = formats.at(format.get<std::string>());
    pattern_key = "format";
  } else if (schema.contains("pattern")) {
    const std::string where = schema_path(path, "pattern");
    if (!schema["pattern"].is_string()) refuse(where, "expected a string");
    if (lengths) refuse(where, "pattern together with minLength or maxLength is not supported");
    pattern = schema["pattern"].get<std::string>();
  }
  if (!pattern.empty() || schema.contains("pattern")) {
    try {
      return regex_rule(b_, pattern, encoding);
    } catch (const SchemaError&) {
      throw;
    } catch (const Error& e) {
      refuse(schema_path(path, pattern_key), e.what());
    }
  }
  const int min =
      schema.contains("minLength") ? bound(schema, "minLength", kMaxStringLength, path) : 0;
  const int max =
      schema.contains("maxLength") ? bound(schema, "maxLength", kMaxStringLength, path) : -1;
  if (max >= 0 && max < min) refuse(schema_path(path, "maxLength"), "is below minLength");
  int32_t character;
  try {
    character = char_class_rule(b_, CharClass::any(), encoding, encoding.json_escape);
  } catch (const Error& e) {
    refuse(path, e.what());
  }
  if (min == 0 && max < 0) return b_.star("chars", {GrammarBuilder::ref(character)});
  return b_.repeat("chars", {GrammarBuilder::ref(character)}, min, max);
}

int32_t JsonSchemaCompiler::integer_value(const Json& schema, const std::string& path) {
  // Digits are bounded (18: within int64) so that a model cannot run on forever inside one number.
  const int32_t digits = b_.repeat("digits", {b_.byte_range('0', '9')}, 0, 17);
  const int32_t positive =
      b_.choice("positive", {{b_.byte_range('1', '9'), GrammarBuilder::ref(digits)}});
  int lowest = -1;  // -1: any integer
  if (schema.contains("minimum")) {
    const Json& m = schema["minimum"];
    if (!(m == 0 || m == 1)) refuse(schema_path(path, "minimum"), "only 0 and 1 are supported");
    lowest = m.get<int>();
  }
  if (schema.contains("exclusiveMinimum")) {
    const Json& m = schema["exclusiveMinimum"];
    if (!(m == 0)) refuse(schema_path(path, "exclusiveMinimum"), "only 0 is supported");
    lowest = std::max(lowest, 1);
  }
  if (lowest == 1) return positive;
  const int32_t natural = b_.choice("natural", {b_.literal("0"), {GrammarBuilder::ref(positive)}});
  if (lowest == 0) return natural;
  return b_.choice("integer",
                   {{GrammarBuilder::ref(natural)}, {b_.byte('-'), GrammarBuilder::ref(positive)}});
}

int32_t JsonSchemaCompiler::number_value(const Json& schema, const std::string& path) {
  bool non_negative = false;
  if (schema.contains("minimum")) {
    if (!(schema["minimum"] == 0)) refuse(schema_path(path, "minimum"), "only 0 is supported");
    non_negative = true;
  }
  if (schema.contains("exclusiveMinimum"))
    refuse(schema_path(path, "exclusiveMinimum"), "not supported for numbers");
  const GrammarElement digit = b_.byte_range('0', '9');
  const int32_t whole = b_.choice(
      "whole",
      {b_.literal("0"),
       {b_.byte_range('1', '9'), GrammarBuilder::ref(b_.repeat("digits", {digit}, 0, 15))}});
  const int32_t fraction = b_.optional(
      "fraction", {b_.byte('.'), GrammarBuilder::ref(b_.repeat("digits", {digit}, 1, 15))});
  SymbolSet e, sign;
  e.set('e'), e.set('E'), sign.set('+'), sign.set('-');
  const int32_t exponent = b_.optional(
      "exponent", {b_.terminal(e), GrammarBuilder::ref(b_.optional("sign", {b_.terminal(sign)})),
                   GrammarBuilder::ref(b_.repeat("digits", {digit}, 1, 2))});
  ElementSequence number{GrammarBuilder::ref(whole), GrammarBuilder::ref(fraction),
                         GrammarBuilder::ref(exponent)};
  if (!non_negative)
    number.insert(number.begin(), GrammarBuilder::ref(b_.optional("minus", {b_.byte('-')})));
  return b_.choice("number", {std::move(number)});
}

int32_t JsonSchemaCompiler::object_value(const Json& schema, const std::string& path) {
  const Json none = Json::object();
  const Json& properties = schema.contains("properties") ? schema["properties"] : none;
  if (!properties.is_object()) refuse(schema_path(path, "properties"), "expected an object");
  const Json* additional =
      schema.contains("additionalProperties") ? &schema["additionalProperties"] : nullptr;
  const bool closed = additional && additional->is_boolean() && !additional->get<bool>();
  std::set<std::string> required;
  if (schema.contains("required")) {
    const Json& list = schema["required"];
    if (!list.is_array()) refuse(schema_path(path, "required"), "expected an array of names");
    for (const Json& name : list) {
      if (!name.is_string()) refuse(schema_path(path, "required"), "expected an array of names");
      required.insert(name.get<std::string>());
    }
  }
  struct Member {
    std::string key;
    int32_t value;
    bool required;
  };
  std::vector<Member> members;
  for (auto it = properties.begin(); it != properties.end(); ++it)
    members.push_back({it.key(),
                       value(it.value(), schema_path(schema_path(path, "properties"), it.key())),
                       required.count(it.key()) > 0});
  for (const std::string& name : required) {
    if (properties.contains(name)) continue;
    if (closed)
      refuse(
          schema_path(path, "required"),
          fmt::format("'{}' is required but not in properties, and additionalProperties is false",
                      name));
    const int32_t v = additional && !additional->is_boolean()
                          ? value(*additional, schema_path(path, "additionalProperties"))
                          : any_value();
    members.push_back({name, v, true});
  }
  if (members.empty() && !closed) {
    // A map: any keys, values of additionalProperties (or anything).
    const int32_t v = additional && !additional->is_boolean()
                          ? value(*additional, schema_path(path, "additionalProperties"))
                          : any_value();
    const int32_t member = b_.choice("member", {{GrammarBuilder::ref(json_string_rule(none, "")),
                                                 b_.byte(':'), GrammarBuilder::ref(v)}});
    const int32_t more = b_.star("members", {b_.byte(','), GrammarBuilder::ref(member)});
    return b_.choice("map", {{b_.byte('{'), b_.byte('}')},
                             {b_.byte('{'), GrammarBuilder::ref(member), GrammarBuilder::ref(more),
                              b_.byte('}')}});
  }
  // first[i]: the members from i on, the first one written without a comma; rest[i]: the same
  // with every member after a comma. An optional member may be skipped; a required one not.
  const size_t n = members.size();
  std::vector<int32_t> first(n + 1), rest(n + 1);
  first[n] = rest[n] = b_.choice("end", {{}});
  for (size_t i = n; i-- > 0;) {
    ElementSequence kv = b_.literal(Json(members[i].key).dump() + ":");
    kv.push_back(GrammarBuilder::ref(members[i].value));
    std::vector<ElementSequence> r{
        concat(concat({b_.byte(',')}, kv), {GrammarBuilder::ref(rest[i + 1])})};
    std::vector<ElementSequence> f{concat(kv, {GrammarBuilder::ref(rest[i + 1])})};
    if (!members[i].required) {
      r.push_back({GrammarBuilder::ref(rest[i + 1])});
      f.push_back({GrammarBuilder::ref(first[i + 1])});
    }
    rest[i] = b_.choice("rest", std::move(r));
    first[i] = b_.choice("members", std::move(f));
  }
  return b_.choice("object", {{b_.byte('{'), GrammarBuilder::ref(first[0]), b_.byte('}')}});
}

int32_t JsonSchemaCompiler::array_value(const Json& schema, const std::string& path) {
  const Json empty = Json::array();
  const Json& prefix = schema.contains("prefixItems") ? schema["prefixItems"] : empty;
  if (!prefix.is_array()) refuse(schema_path(path, "prefixItems"), "expected an array of schemas");
  const Json* items = schema.contains("items") ? &schema["items"] : nullptr;
  const bool closed = items && items->is_boolean() && !items->get<bool>();
  int min = schema.contains("minItems") ? bound(schema, "minItems", kMaxItems, path) : 0;
  int max = schema.contains("maxItems") ? bound(schema, "maxItems", kMaxItems, path) : -1;
  const int p = static_cast<int>(prefix.size());
  if (closed) max = max < 0 ? p : std::min(max, p);
  if (max >= 0 && max < min)
    refuse(schema_path(path, closed ? "items" : "maxItems"), "fewer items allowed than minItems");
  int32_t item = -1;
  auto element = [&](int k) {
    if (k < p)
      return value(prefix[k], schema_path(schema_path(path, "prefixItems"), std::to_string(k)));
    if (item < 0) item = items ? value(*items, schema_path(path, "items")) : any_value();
    return item;
  };
  if (max == 0) return b_.choice("array", {b_.literal("[]")});
  // tail[k]: the elements from position k on (k >= 1), each after a comma.
  const int top = max >= 0 ? max : std::max({p, min, 1});
  int32_t tail = max >= 0 ? b_.choice("end", {{}})
                          : b_.star("items", {b_.byte(','), GrammarBuilder::ref(element(top))});
  for (int k = top - 1; k >= 1; --k) {
    std::vector<ElementSequence> alternatives{
        {b_.byte(','), GrammarBuilder::ref(element(k)), GrammarBuilder::ref(tail)}};
    if (k >= min) alternatives.push_back({});
    tail = b_.choice("items", std::move(alternatives));
  }
  std::vector<ElementSequence> alternatives{
      {b_.byte('['), GrammarBuilder::ref(element(0)), GrammarBuilder::ref(tail), b_.byte(']')}};
  if (min == 0) alternatives.push_back(b_.literal("[]"));
  return b_.choice("array", std::move(alternatives));
}

Grammar json_schema_grammar(const Json& schema) {
  GrammarBuilder b;
  JsonSchemaCompiler compiler(b, schema);
  const int32_t root = compiler.value(schema, "");
  try {
    Grammar grammar = b.build(root);
    if (grammar.rules.size() > kMaxRules)
      refuse("", fmt::format("the schema needs more than {} grammar rules", kMaxRules));
    return grammar;
  } catch (const SchemaError&) {
    throw;
  } catch (const Error& e) {
    refuse("", e.what());  // e.g. a $ref cycle that consumes nothing
  }
}

Grammar json_object_grammar() {
  GrammarBuilder b;
  JsonSchemaCompiler compiler(b, Json::object());
  return b.build(compiler.any_object());
}

}  // namespace minimax
