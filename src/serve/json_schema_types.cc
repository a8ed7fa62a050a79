// JSON Schema → grammar, the rules of each JSON type: strings (lengths, patterns, formats),
// integers, numbers, objects and arrays (serve/json_schema_grammar.h).
#include <algorithm>
#include <set>

#include "serve/json_schema_grammar.h"
#include "text/grammar/regex_grammar.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kMaxStringLength = 4096;  // minLength / maxLength (a counted repetition)
constexpr int kMaxItems = 1000;         // minItems / maxItems (expanded into rules)

int bound(const Json& schema, const char* key, int limit, const std::string& path) {
  const Json& v = schema.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < 0)
    throw_schema_error(schema_path(path, key), "expected a non-negative integer");
  if (v.get<int64_t>() > limit)
    throw_schema_error(schema_path(path, key),
                       fmt::format("values above {} are not supported", limit));
  return v.get<int>();
}

}  // namespace

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
      throw_schema_error(where, "only the formats date, time, date-time and uuid are supported");
    if (schema.contains("pattern") || lengths)
      throw_schema_error(where,
                         "format together with pattern, minLength or maxLength is not supported");
    pattern = formats.at(format.get<std::string>());
    pattern_key = "format";
  } else if (schema.contains("pattern")) {
    const std::string where = schema_path(path, "pattern");
    if (!schema["pattern"].is_string()) throw_schema_error(where, "expected a string");
    if (lengths)
      throw_schema_error(where, "pattern together with minLength or maxLength is not supported");
    pattern = schema["pattern"].get<std::string>();
  }
  if (!pattern.empty() || schema.contains("pattern")) {
    try {
      return regex_rule(b_, pattern, encoding);
    } catch (const SchemaError&) {
      throw;
    } catch (const Error& e) {
      throw_schema_error(schema_path(path, pattern_key), e.what());
    }
  }
  const int min =
      schema.contains("minLength") ? bound(schema, "minLength", kMaxStringLength, path) : 0;
  const int max =
      schema.contains("maxLength") ? bound(schema, "maxLength", kMaxStringLength, path) : -1;
  if (max >= 0 && max < min)
    throw_schema_error(schema_path(path, "maxLength"), "is below minLength");
  int32_t character;
  try {
    character = char_class_rule(b_, CharClass::any(), encoding, encoding.json_escape);
  } catch (const Error& e) {
    throw_schema_error(path, e.what());
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
    if (!(m == 0 || m == 1))
      throw_schema_error(schema_path(path, "minimum"), "only 0 and 1 are supported");
    lowest = m.get<int>();
  }
  if (schema.contains("exclusiveMinimum")) {
    const Json& m = schema["exclusiveMinimum"];
    if (!(m == 0)) throw_schema_error(schema_path(path, "exclusiveMinimum"), "only 0 is supported");
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
    if (!(schema["minimum"] == 0))
      throw_schema_error(schema_path(path, "minimum"), "only 0 is supported");
    non_negative = true;
  }
  if (schema.contains("exclusiveMinimum"))
    throw_schema_error(schema_path(path, "exclusiveMinimum"), "not supported for numbers");
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
  if (!properties.is_object())
    throw_schema_error(schema_path(path, "properties"), "expected an object");
  const Json* additional =
      schema.contains("additionalProperties") ? &schema["additionalProperties"] : nullptr;
  const bool closed = additional && additional->is_boolean() && !additional->get<bool>();
  std::set<std::string> required;
  if (schema.contains("required")) {
    const Json& list = schema["required"];
    if (!list.is_array())
      throw_schema_error(schema_path(path, "required"), "expected an array of names");
    for (const Json& name : list) {
      if (!name.is_string())
        throw_schema_error(schema_path(path, "required"), "expected an array of names");
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
      throw_schema_error(
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
  if (!prefix.is_array())
    throw_schema_error(schema_path(path, "prefixItems"), "expected an array of schemas");
  const Json* items = schema.contains("items") ? &schema["items"] : nullptr;
  const bool closed = items && items->is_boolean() && !items->get<bool>();
  int min = schema.contains("minItems") ? bound(schema, "minItems", kMaxItems, path) : 0;
  int max = schema.contains("maxItems") ? bound(schema, "maxItems", kMaxItems, path) : -1;
  const int p = static_cast<int>(prefix.size());
  if (closed) max = max < 0 ? p : std::min(max, p);
  if (max >= 0 && max < min)
    throw_schema_error(schema_path(path, closed ? "items" : "maxItems"),
                       "fewer items allowed than minItems");
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

}  // namespace minimax
