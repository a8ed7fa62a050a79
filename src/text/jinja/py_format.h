// Python's text forms of values, which chat templates expose: float.__repr__, str.__repr__ (what
// printing a list or dict shows) and json.dumps as transformers' tojson filter calls it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace minimax::jinja {

using Json = nlohmann::ordered_json;

// float.__repr__: shortest round-trip digits, "1.0", "1e-07", "1e+16", "inf", "nan".
std::string python_float_repr(double value);

// str.__repr__: single quotes unless the text holds ' and no ", escapes as Python does.
std::string python_string_repr(std::string_view text);

// repr() of JSON data as Python sees it after json.loads: None, True, 1.0, 'text', [..], {..}.
std::string python_repr(const Json& value);

struct JsonDumpOptions {
  std::optional<int> indent;                  // None: one line
  std::optional<std::string> item_separator;  // default ", " (or "," with indent)
  std::string key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};

// json.dumps(value, ...) byte for byte, key order preserved unless sort_keys.
std::string python_json_dumps(const Json& value, const JsonDumpOptions& options);

}  // namespace minimax::jinja
