// Schema-driven typing of tool-call argument text (serve/schema_coerce.h).
#include "serve/schema_coerce.h"

#include <charconv>
#include <cmath>
#include <optional>

#include "base/error.h"

namespace minimax {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

constexpr int kMaxSchemaDepth = 16;  // $ref chains and nested anyOf; guards against cycles

// Follows local "$ref"s ("#/$defs/x") through `root`; the schema itself when it has none.
const json* resolve(const json* schema, const json* root) {
  for (int depth = 0; schema && depth < kMaxSchemaDepth; ++depth) {
    if (!schema->is_object() || !root) return schema;
    auto it = schema->find("$ref");
    if (it == schema->end() || !it->is_string()) return schema;
    const std::string& ref = it->get_ref<const std::string&>();
    if (!ref.starts_with("#")) return schema;
    try {
      const json::json_pointer pointer(ref.substr(1));
      if (!root->contains(pointer)) return nullptr;
      schema = &root->at(pointer);
    } catch (const json::exception&) {
      return nullptr;
    }
  }
  return schema;
}

unsigned type_bit(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name == "string" || name == "str" || name == "text") return kTypeString;
  if (name == "integer" || name == "int") return kTypeInteger;
  if (name == "number" || name == "float") return kTypeNumber;
  if (name == "boolean" || name == "bool") return kTypeBoolean;
  if (name == "object" || name == "dict") return kTypeObject;
  if (name == "array" || name == "list") return kTypeArray;
  if (name == "null") return kTypeNull;
  return 0;
}

unsigned value_type(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return kTypeNull;
    case json::value_t::boolean:
      return kTypeBoolean;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return kTypeInteger;
    case json::value_t::number_float:
      return kTypeNumber;
    case json::value_t::string:
      return kTypeString;
    case json::value_t::array:
      return kTypeArray;
    case json::value_t::object:
      return kTypeObject;
    default:
      return 0;
  }
}

constexpr const char* kAlternatives[] = {"anyOf", "oneOf", "allOf"};

unsigned types_of(const json* schema, const json* root, int depth) {
  schema = resolve(schema, root);
  if (!schema || !schema->is_object() || depth > kMaxSchemaDepth) return 0;
  unsigned types = 0;
  if (auto it = schema->find("type"); it != schema->end()) {
    if (it->is_string()) types |= type_bit(it->get<std::string>());
    if (it->is_array())
      for (const json& name : *it)
        if (name.is_string()) types |= type_bit(name.get<std::string>());
  }
  if (auto it = schema->find("enum"); it != schema->end() && it->is_array())
    for (const json& value : *it) types |= value_type(value);
  if (auto it = schema->find("const"); it != schema->end()) types |= value_type(*it);
  for (const char* key : kAlternatives)
    if (auto it = schema->find(key); it != schema->end() && it->is_array())
      for (const json& alternative : *it) types |= types_of(&alternative, root, depth + 1);
  return types;
}

const json* object_member(const json& schema, const char* key) {
  auto it = schema.find(key);
  return it != schema.end() && it->is_object() ? &*it : nullptr;
}

const json* find_property(const json* schema, std::string_view key, const json* root, int depth) {
  schema = resolve(schema, root);
  if (!schema || !schema->is_object() || depth > kMaxSchemaDepth) return nullptr;
  if (const json* properties = object_member(*schema, "properties")) {
    auto it = properties->find(key);
    if (it != properties->end() && it->is_object()) return resolve(&*it, root);
  }
  if (const json* additional = object_member(*schema, "additionalProperties"))
    return resolve(additional, root);
  for (const char* alternatives : kAlternatives)
    if (auto it = schema->find(alternatives); it != schema->end() && it->is_array())
      for (const json& alternative : *it)
        if (const json* found = find_property(&alternative, key, root, depth + 1)) return found;
  return nullptr;
}

const json* find_item(const json* schema, size_t index, const json* root, int depth) {
  schema = resolve(schema, root);
  if (!schema || !schema->is_object() || depth > kMaxSchemaDepth) return nullptr;
  auto prefix = schema->find("prefixItems");
  const bool has_prefix = prefix != schema->end() && prefix->is_array() && !prefix->empty();
  if (has_prefix && index < prefix->size() && (*prefix)[index].is_object())
    return resolve(&(*prefix)[index], root);
  if (const json* additional = object_member(*schema, "additionalItems"))
    return resolve(additional, root);
  if (auto items = schema->find("items"); items != schema->end()) {
    if (items->is_object()) return resolve(&*items, root);
    if (items->is_array() && index < items->size() && (*items)[index].is_object())
      return resolve(&(*items)[index], root);  // draft-4 tuple form
  }
  if (has_prefix && prefix->back().is_object()) return resolve(&prefix->back(), root);
  for (const char* alternatives : kAlternatives)
    if (auto it = schema->find(alternatives); it != schema->end() && it->is_array())
      for (const json& alternative : *it)
        if (const json* found = find_item(&alternative, index, root, depth + 1)) return found;
  return nullptr;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  return true;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

std::optional<ojson> parse_integer(std::string_view s) {
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  if (!all_digits(s)) return std::nullopt;
  uint64_t magnitude = 0;
  auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), magnitude);
  if (error != std::errc() || end != s.data() + s.size()) return std::nullopt;  // too large
  if (!negative) return ojson(magnitude);
  if (magnitude > uint64_t{1} << 63) return std::nullopt;
  return ojson(static_cast<int64_t>(0 - magnitude));
}

// A decimal number as Python's float() reads it, less inf/nan (JSON has neither); an integral
// value becomes an integer ("3.0" → 3), as vLLM and SGLang return it.
std::optional<ojson> parse_number(std::string_view s) {
  std::string_view body = s;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) body.remove_prefix(1);
  size_t i = 0, digits = 0;
  while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, ++digits;
  if (i < body.size() && body[i] == '.') {
    ++i;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, ++digits;
  }
  if (digits == 0) return std::nullopt;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '-' || body[i] == '+')) ++i;
    if (i >= body.size() || body[i] < '0' || body[i] > '9') return std::nullopt;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i;
  }
  if (i != body.size()) return std::nullopt;
  double value = 0;
  auto [end, error] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (error != std::errc() || end != body.data() + body.size() || !std::isfinite(value))
    return std::nullopt;
  if (s[0] == '-') value = -value;
  if (value == std::trunc(value) && std::fabs(value) < 9.2e18)
    return ojson(static_cast<int64_t>(value));
  return ojson(value);
}

std::optional<ojson> parse_boolean(std::string_view s) {
  for (const char* word : {"true", "1", "yes", "on"})
    if (iequals(s, word)) return ojson(true);
  for (const char* word : {"false", "0", "no", "off"})
    if (iequals(s, word)) return ojson(false);
  return std::nullopt;
}

std::optional<ojson> parse_json(std::string_view s) {
  ojson value = ojson::parse(s, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::nullopt;
  return value;
}

ojson json_or_text(std::string_view trimmed, std::string_view text) {
  if (std::optional<ojson> value = parse_json(trimmed)) return *value;
  return ojson(std::string(text));
}

}  // namespace

std::string_view trim_space(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  const size_t begin = text.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kSpace) - begin + 1);
}

ToolSchemas::ToolSchemas(const json& tools) {
  if (tools.is_null()) return;
  if (!tools.is_array()) fail("tools: expected an array, got {}", tools.type_name());
  for (size_t i = 0; i < tools.size(); ++i) {
    const json& tool = tools[i];
    if (!tool.is_object()) fail("tools[{}]: expected an object, got {}", i, tool.type_name());
    const bool wrapped = tool.contains("function");
    const json& function = wrapped ? tool["function"] : tool;
    const std::string where =
        wrapped ? fmt::format("tools[{}].function", i) : fmt::format("tools[{}]", i);
    if (!function.is_object()) fail("{}: expected an object, got {}", where, function.type_name());
    auto name = function.find("name");
    if (name == function.end() || !name->is_string()) fail("{}.name: expected a string", where);
    auto parameters = function.find("parameters");
    parameters_[name->get<std::string>()] =
        parameters != function.end() ? *parameters : json(nullptr);
  }
}

const json* ToolSchemas::parameters(std::string_view tool_name) const {
  auto it = parameters_.find(tool_name);
  if (it == parameters_.end() || !it->second.is_object()) return nullptr;
  return &it->second;
}

unsigned schema_types(const json* schema, const json* root) { return types_of(schema, root, 0); }

const json* property_schema(const json* schema, std::string_view key, const json* root) {
  return find_property(schema, key, root, 0);
}

const json* item_schema(const json* schema, size_t index, const json* root) {
  return find_item(schema, index, root, 0);
}

ojson coerce_value(std::string_view text, const json* schema, const json* root) {
  // No schema (no tools in the request, an undeclared tool or parameter): the text as written,
  // as vLLM does; guessing a type would turn a zip code or an id like "0042" into a number.
  if (schema == nullptr) return std::string(text);
  const std::string_view trimmed = trim_space(text);
  const unsigned types = schema_types(schema, root);
  if (types == 0) return json_or_text(trimmed, text);
  if (types & kTypeNull) {
    if (iequals(trimmed, "null")) return nullptr;
    if (trimmed.empty() && !(types & kTypeString)) return nullptr;
  }
  if (trimmed.empty()) {  // an empty element: the empty container the schema asks for
    if (types & kTypeObject) return ojson::object();
    if (types & kTypeArray) return ojson::array();
  }
  if (types & kTypeInteger)
    if (auto value = parse_integer(trimmed)) return *value;
  if (types & kTypeNumber)
    if (auto value = parse_number(trimmed)) return *value;
  if (types & kTypeBoolean)
    if (auto value = parse_boolean(trimmed)) return *value;
  if (types & kTypeObject)
    if (auto value = parse_json(trimmed); value && value->is_object()) return *value;
  if (types & kTypeArray)
    if (auto value = parse_json(trimmed); value && value->is_array()) return *value;
  if (types & kTypeString) return std::string(text);
  return json_or_text(trimmed, text);
}

}  // namespace minimax
