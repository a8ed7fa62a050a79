// Test helpers for the schema and tool-call grammars: a small JSON Schema validator for the
// supported subset (independent of the compiler), random walks through a grammar (sentences it
// produces), and random valid values of a schema in the compiler's canonical form (compact,
// properties in declared order).
#pragma once

#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <string>

#include "text/grammar/grammar_automaton.h"

namespace minimax::testing {

using OJson = nlohmann::ordered_json;

// UTF-8 code points of a string (the unit of minLength / maxLength).
inline size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

inline const OJson& resolve_ref(const OJson& schema, const OJson& root) {
  if (schema.is_object() && schema.contains("$ref"))
    return root.at(OJson::json_pointer(schema["$ref"].get<std::string>().substr(1)));
  return schema;
}

// Whether `v` is valid under `schema` (the keywords the compiler supports).
inline bool validates(const OJson& v, const OJson& schema_in, const OJson& root) {
  const OJson& s = resolve_ref(schema_in, root);
  if (s.is_boolean()) return s.get<bool>();
  if (s.contains("anyOf")) {
    for (const OJson& alt : s["anyOf"])
      if (validates(v, alt, root)) return true;
    return false;
  }
  if (s.contains("allOf"))
    for (const OJson& alt : s["allOf"])
      if (!validates(v, alt, root)) return false;
  if (s.contains("const") && v != s["const"]) return false;
  if (s.contains("enum")) {
    bool found = false;
    for (const OJson& e : s["enum"]) found = found || e == v;
    if (!found) return false;
  }
  if (s.contains("type")) {
    std::vector<std::string> types;
    if (s["type"].is_string())
      types.push_back(s["type"]);
    else
      for (const OJson& t : s["type"]) types.push_back(t);
    bool ok = false;
    for (const std::string& t : types)
      ok = ok || (t == "string" && v.is_string()) || (t == "boolean" && v.is_boolean()) ||
           (t == "null" && v.is_null()) || (t == "object" && v.is_object()) ||
           (t == "array" && v.is_array()) || (t == "number" && v.is_number()) ||
           (t == "integer" &&
            (v.is_number_integer() ||
             (v.is_number_float() && v.get<double>() == std::floor(v.get<double>()))));
    if (!ok) return false;
  }
  if (v.is_string()) {
    const std::string& str = v.get_ref<const std::string&>();
    if (s.contains("minLength") && code_points(str) < s["minLength"].get<size_t>()) return false;
    if (s.contains("maxLength") && code_points(str) > s["maxLength"].get<size_t>()) return false;
    if (s.contains("pattern") && !std::regex_search(str, std::regex(s["pattern"].get<std::string>(),
                                                                    std::regex::ECMAScript)))
      return false;
  }
  if (v.is_number()) {
    if (s.contains("minimum") && v.get<double>() < s["minimum"].get<double>()) return false;
    if (s.contains("exclusiveMinimum") && v.get<double>() <= s["exclusiveMinimum"].get<double>())
      return false;
  }
  if (v.is_object()) {
    const OJson props = s.value("properties", OJson::object());
    if (s.contains("required"))
      for (const OJson& r : s["required"])
        if (!v.contains(r.get<std::string>())) return false;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (props.contains(it.key())) {
        if (!validates(it.value(), props[it.key()], root)) return false;
      } else if (s.contains("additionalProperties")) {
        if (!validates(it.value(), s["additionalProperties"], root)) return false;
      }
    }
  }
  if (v.is_array()) {
    if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) return false;
    if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) return false;
    const size_t prefix = s.contains("prefixItems") ? s["prefixItems"].size() : 0;
    for (size_t i = 0; i < v.size(); ++i) {
      if (i < prefix) {
        if (!validates(v[i], s["prefixItems"][i], root)) return false;
      } else if (s.contains("items") && !validates(v[i], s["items"], root)) {
        return false;
      }
    }
  }
  return true;
}

// A random sentence of the grammar (markers spelled as `markers[k]`), or nullopt when the walk
// grew past `max_bytes`. At each step the next state is chosen uniformly among the distinct
// successors (so a string's closing quote is as likely as "any other character"), and the walk
// stops at an accepting state with probability 1/3 (always when nothing may follow).
inline std::optional<std::string> random_sentence(GrammarAutomaton& a, std::mt19937& rng,
                                                  const std::vector<std::string>& markers,
                                                  size_t max_bytes = 600) {
  std::string out;
  int32_t s = a.start();
  while (out.size() < max_bytes) {
    if (a.accepting(s) && (!a.can_continue(s) || rng() % 3 == 0)) return out;
    std::vector<std::pair<int32_t, std::vector<int>>> groups;
    for (int sym = 0; sym < kSymbolCount; ++sym) {
      const int32_t next = a.next(s, sym);
      if (next == GrammarAutomaton::kDead) continue;
      auto it =
          std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == next; });
      if (it == groups.end())
        groups.push_back({next, {sym}});
      else
        it->second.push_back(sym);
    }
    if (groups.empty()) return std::nullopt;  // cannot happen for a live state
    const auto& group = groups[rng() % groups.size()];
    const int sym = group.second[rng() % group.second.size()];
    out += sym < 256 ? std::string(1, static_cast<char>(sym)) : markers.at(sym - 256);
    s = group.first;
  }
  return std::nullopt;
}

}  // namespace minimax::testing
