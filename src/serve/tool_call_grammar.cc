// Tool-call block grammars for M2 and M3 (serve/tool_call_grammar.h).
#include "serve/tool_call_grammar.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "serve/json_schema_grammar.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void refuse(const std::string& path, const std::string& message) {
  throw SchemaError(path, message);
}

// `name="…"` as the parsers read it back (serve/tool_parser.cc parse_name_attribute).
std::string name_attribute(const std::string& name, const std::string& path) {
  if (name.empty()) refuse(path, "an empty name cannot be called");
  if (name.find_first_of("<>") != std::string::npos)
    refuse(path, "a name with '<' or '>' cannot be written in the MiniMax tool-call format");
  if (name.find('"') == std::string::npos) return "name=\"" + name + "\"";
  if (name.find('\'') == std::string::npos) return "name='" + name + "'";
  refuse(path, "a name with both quote characters cannot be written in the MiniMax format");
}

// An M3 element tag: the parser trims it and splits nothing, so it must hold no whitespace or
// angle bracket and must not look like a close tag.
void check_tag(const std::string& key, const std::string& path) {
  if (key.empty() || key[0] == '/' || key.find_first_of("<> \t\r\n\f\v") != std::string::npos)
    refuse(path, "this property name cannot be an element of the MiniMax-M3 tool-call format");
}

TextEncoding raw_text(bool m2) {
  TextEncoding e;
  e.json_escape = false;
  for (int c = 0; c < 0x20; ++c)
    if (c != '\n' && c != '\t') e.forbidden.set(c);
  if (m2) e.forbidden.set('<');  // a value ends at the first "</parameter>"
  return e;
}

class ToolCallCompiler {
 public:
  ToolCallCompiler(ParserFormat format, GrammarBuilder& b)
      : m2_(parser_format_spec(format).parameter_tags), b_(b), encoding_(raw_text(m2_)) {
    const ParserFormatSpec& spec = parser_format_spec(format);
    ns_ = spec.markers[spec.tool_marker];
  }

  Grammar block(const Json& tools, std::string_view only_tool, bool parallel) {
    std::vector<ElementSequence> invokes;
    for (size_t i = 0; i < tools.size(); ++i) {
      const Json& tool = tools[i];
      const Json& function = tool.contains("function") ? tool["function"] : tool;
      const std::string name = function.value("name", "");
      if (!only_tool.empty() && name != only_tool) continue;
      invokes.push_back(
          {GrammarBuilder::ref(invoke(function, fmt::format("tools[{}].function", i)))});
    }
    if (invokes.empty()) refuse("tool_choice", "no tool of that name");
    const int32_t one = b_.choice("invoke", std::move(invokes));
    const int32_t calls = parallel ? b_.plus("invokes", {GrammarBuilder::ref(one)}) : one;
    ElementSequence root;
    if (m2_) {
      root = {b_.marker("<minimax:tool_call>"), b_.byte('\n'), GrammarBuilder::ref(calls),
              b_.marker("</minimax:tool_call>")};
    } else {
      root = concat(concat(ns("<tool_call>\n"), {GrammarBuilder::ref(calls)}), ns("</tool_call>"));
    }
    return b_.build(b_.choice("tool_call", {std::move(root)}));
  }

 private:
  // The namespace marker then `text` (M3).
  ElementSequence ns(std::string_view text) { return concat({b_.marker(ns_)}, b_.literal(text)); }

  int32_t invoke(const Json& function, const std::string& path) {
    const std::string name = function.value("name", "");
    const std::string attribute = name_attribute(name, path + ".name");
    const Json none = Json::object();
    const Json& parameters = function.contains("parameters") ? function["parameters"] : none;
    const std::string where = path + ".parameters";
    JsonSchemaCompiler compiler(b_, parameters);
    ref_rules_.clear();  // a $ref resolves within this tool's parameters
    compiler.check_keywords(parameters, where);
    ElementSequence body;
    if (m2_) {
      body = b_.literal("<invoke " + attribute + ">\n");
      body = concat(body, arguments(compiler, parameters, where));
      body = concat(body, b_.literal("</invoke>\n"));
    } else {
      body = ns("<invoke " + attribute + ">");
      body = concat(body, arguments(compiler, parameters, where));
      body = concat(body, ns("</invoke>\n"));
    }
    return b_.choice("call", {std::move(body)});
  }

  // The members of an object schema, each as a parameter (M2) or child element (M3).
  ElementSequence arguments(JsonSchemaCompiler& c, const Json& schema, const std::string& path) {
    const Json& s = c.resolve(schema, path);
    if (!s.is_object()) return {};
    std::set<std::string> required;
    if (s.contains("required") && s["required"].is_array())
      for (const Json& r : s["required"])
        if (r.is_string()) required.insert(r.get<std::string>());
    ElementSequence out;
    const Json none = Json::object();
    const Json& properties = s.contains("properties") ? s["properties"] : none;
    if (!properties.is_object()) refuse(schema_path(path, "properties"), "expected an object");
    for (auto it = properties.begin(); it != properties.end(); ++it) {
      const std::string where = schema_path(schema_path(path, "properties"), it.key());
      const int32_t member = argument(c, it.key(), it.value(), where);
      out.push_back(GrammarBuilder::ref(
          required.count(it.key()) ? member
                                   : b_.optional("optional", {GrammarBuilder::ref(member)})));
    }
    for (const std::string& name : required)
      if (!properties.contains(name))
        out.push_back(
            GrammarBuilder::ref(argument(c, name, Json(true), schema_path(path, "required"))));
    return out;
  }

  int32_t argument(JsonSchemaCompiler& c, const std::string& key, const Json& schema,
                   const std::string& path) {
    if (m2_) {
      ElementSequence seq = b_.literal("<parameter " + name_attribute(key, path) + ">");
      seq.push_back(GrammarBuilder::ref(value(c, schema, path)));
      return b_.choice("parameter", {concat(seq, b_.literal("</parameter>\n"))});
    }
    check_tag(key, path);
    ElementSequence seq = ns("<" + key + ">");
    seq.push_back(GrammarBuilder::ref(value(c, schema, path)));
    return b_.choice("element", {concat(seq, ns("</" + key + ">"))});
  }

  // A value as the format writes it: strings raw, M2's other values as JSON, M3's objects and
  // arrays as elements.
  int32_t value(JsonSchemaCompiler& c, const Json& schema, const std::string& path) {
    const JsonSchemaCompiler::Level level = c.enter(path);
    c.check_keywords(schema, path);
    if (schema.is_object() && schema.contains("$ref")) {
      // One rule per $ref, made before its target is compiled, so that a schema referring to
      // itself compiles to a recursive rule instead of being followed forever.
      const std::string key = schema["$ref"].is_string() ? schema["$ref"].get<std::string>() : "";
      if (auto it = ref_rules_.find(key); it != ref_rules_.end()) return it->second;
      const Json& target = c.resolve(schema, path);
      const int32_t rule = b_.new_rule("ref");
      ref_rules_[key] = rule;
      b_.add_alternative(rule, {GrammarBuilder::ref(value(c, target, schema_path(path, "$ref")))});
      return rule;
    }
    const Json& s = schema;
    if (!s.is_object()) return raw_any(c);
    if (s.contains("anyOf") || s.contains("allOf")) {
      const char* key = s.contains("anyOf") ? "anyOf" : "allOf";
      const Json& list = s[key];
      const std::string where = schema_path(path, key);
      if (!list.is_array() || list.empty()) refuse(where, "expected a non-empty array of schemas");
      if (std::string(key) == "allOf" && list.size() != 1)
        refuse(where, "allOf with more than one schema is not supported");
      std::vector<ElementSequence> alternatives;
      for (size_t i = 0; i < list.size(); ++i)
        alternatives.push_back(
            {GrammarBuilder::ref(value(c, list[i], schema_path(where, std::to_string(i))))});
      return b_.choice("anyof", std::move(alternatives));
    }
    if (s.contains("enum") || s.contains("const")) {
      const Json values = s.contains("const") ? Json::array({s["const"]}) : s["enum"];
      if (!values.is_array() || values.empty())
        refuse(schema_path(path, "enum"), "expected a non-empty array");
      std::vector<ElementSequence> alternatives;
      for (const Json& v : values) {
        if (!m2_ && (v.is_object() || v.is_array()))
          refuse(schema_path(path, "enum"),
                 "object and array values are not supported in the M3 format");
        const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
        if (m2_ && text.find("</parameter>") != std::string::npos)
          refuse(schema_path(path, "enum"), "a value cannot contain </parameter>");
        alternatives.push_back(b_.literal(text));
      }
      return b_.choice("literal", std::move(alternatives));
    }
    const std::vector<std::string> types = JsonSchemaCompiler::types_of(s, path);
    if (types.empty()) return raw_any(c);
    std::vector<ElementSequence> alternatives;
    Json others = Json::array();
    for (const std::string& t : types) {
      if (t == "string") {
        alternatives.push_back({GrammarBuilder::ref(c.string_body(s, path, encoding_))});
      } else if (!m2_ && t == "object") {
        alternatives.push_back(arguments(c, s, path));
      } else if (!m2_ && t == "array") {
        alternatives.push_back({GrammarBuilder::ref(m3_items(c, s, path))});
      } else {
        others.push_back(t);
      }
    }
    if (!others.empty()) {
      Json typed = s;
      typed["type"] = others;
      alternatives.push_back({GrammarBuilder::ref(c.value(typed, path))});
    }
    return b_.choice("value", std::move(alternatives));
  }

  int32_t m3_items(JsonSchemaCompiler& c, const Json& s, const std::string& path) {
    if (s.contains("prefixItems"))
      refuse(schema_path(path, "prefixItems"), "not supported in the M3 tool-call format");
    auto count = [&](const char* key, int fallback) {
      if (!s.contains(key)) return fallback;
      const Json& v = s[key];
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000)
        refuse(schema_path(path, key), "expected an integer in [0, 1000]");
      return v.get<int>();
    };
    const int min = count("minItems", 0), max = count("maxItems", -1);
    if (max >= 0 && max < min) refuse(schema_path(path, "maxItems"), "is below minItems");
    const Json any = true;
    const Json& items = s.contains("items") ? s["items"] : any;
    ElementSequence item = ns("<item>");
    item.push_back(GrammarBuilder::ref(value(c, items, schema_path(path, "items"))));
    item = concat(item, ns("</item>"));
    return b_.repeat("items", std::move(item), min, max);
  }

  int32_t raw_any(JsonSchemaCompiler& c) {
    if (raw_any_ < 0) raw_any_ = c.string_body(Json::object(), "", encoding_);
    return raw_any_;
  }

  bool m2_;
  GrammarBuilder& b_;
  TextEncoding encoding_;
  std::string ns_;
  int32_t raw_any_ = -1;
  std::map<std::string, int32_t> ref_rules_;  // by $ref text (value)
};

}  // namespace

Grammar tool_call_grammar(ParserFormat format, const Json& tools, std::string_view only_tool,
                          bool parallel) {
  if (!tools.is_array() || tools.empty()) refuse("tools", "no tools to call");
  try {
    GrammarBuilder builder;
    return ToolCallCompiler(format, builder).block(tools, only_tool, parallel);
  } catch (const SchemaError&) {
    throw;
  } catch (const Error& e) {
    refuse("tools", e.what());  // a $ref cycle that consumes nothing, the rule limit
  }
}

}  // namespace minimax
