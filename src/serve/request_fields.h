// The JSON field readers behind serve/openai_request.h (internal to src/serve): typed access to
// a request object's members, with range checks, and the fields chat and completions share.
// Every problem throws ApiException 400 with `param` naming the field path ("messages[2].role").
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "serve/api_error.h"
#include "serve/openai_request.h"

namespace minimax::request_fields {

using Json = nlohmann::ordered_json;

inline constexpr int kMaxLogprobs = 20;  // vLLM's default max_logprobs, OpenAI's top_logprobs

[[noreturn]] void wrong_type(const std::string& path, std::string_view expected, const Json& got);
[[noreturn]] void unsupported(const std::string& path, std::string_view what);

// Typed access to the members of one JSON object; `prefix` is its path ("" at the top level).
class Fields {
 public:
  Fields(const Json& object, std::string prefix) : object_(object), prefix_(std::move(prefix)) {}

  std::string path(std::string_view key) const {
    return prefix_.empty() ? std::string(key) : fmt::format("{}.{}", prefix_, key);
  }
  // Absent and null are the same: not set.
  const Json* get(std::string_view key) const {
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  std::optional<bool> boolean(std::string_view key) const {
    const Json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) wrong_type(path(key), "a boolean", *v);
    return v->get<bool>();
  }
  std::optional<std::string> string(std::string_view key) const {
    const Json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) wrong_type(path(key), "a string", *v);
    return v->get<std::string>();
  }
  std::optional<double> number(std::string_view key) const {
    const Json* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) wrong_type(path(key), "a number", *v);
    return v->get<double>();
  }
  // Integers, and floats with an integral value (10.0), as Python clients may send them.
  std::optional<int64_t> integer(std::string_view key) const {
    const Json* v = get(key);
    return v ? std::optional(as_integer(*v, path(key))) : std::nullopt;
  }
  const Json* object(std::string_view key) const {
    const Json* v = get(key);
    if (v && !v->is_object()) wrong_type(path(key), "an object", *v);
    return v;
  }
  const Json* array(std::string_view key) const {
    const Json* v = get(key);
    if (v && !v->is_array()) wrong_type(path(key), "an array", *v);
    return v;
  }

  static int64_t as_integer(const Json& v, const std::string& path) {
    if (v.is_number_unsigned()) {
      if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        fail_request(path, fmt::format("{}: {} is out of range", path, v.get<uint64_t>()));
      }
      return static_cast<int64_t>(v.get<uint64_t>());
    }
    if (v.is_number_integer()) return v.get<int64_t>();
    if (v.is_number_float()) {
      double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) <= 9007199254740992.0) {
        return static_cast<int64_t>(d);
      }
    }
    wrong_type(path, "an integer", v);
  }

 private:
  const Json& object_;
  std::string prefix_;
};

// The value of `key` when set, checked to lie in lo..hi.
std::optional<int64_t> bounded_int(const Fields& f, std::string_view key, int64_t lo, int64_t hi);
// A token id: an integer in 0..INT32_MAX.
int32_t token_id(const Json& v, const std::string& path);
// `text` parsed, refusing nesting deeper than 64 levels; errors name `param` ("" = the body).
Json parse_json(std::string_view text, const std::string& param);
// The request body: a JSON object.
Json parse_body(std::string_view body);
// `chat_template_kwargs` (an empty object when absent). A key the server sets itself (`tools`,
// from the request's own field; the variables of TextModel::reserved_template_variable) is a 400
// naming chat_template_kwargs.<key>: the client's value would be ignored, or would hide what the
// template relies on.
Json template_kwargs(const Fields& f);
// The fields chat and completions share; `logprobs` and max_tokens defaults differ and are read
// by the callers.
GenerationFields parse_generation(const Fields& f);

// `tool_choice` when absent or a string ("auto", "none", "required"), given whether the request
// has tools; nullopt for an object, whose form differs per API (the caller reads the name and
// calls named_tool_choice). 400 naming tool_choice for another string, or "required" without
// tools.
std::optional<ToolChoice> tool_choice_mode(const Json* choice, bool have_tools);
// The function `name` (at `path`) among `tools` (the chat form), or 400 naming `path`.
ToolChoice named_tool_choice(const Json& tools, const std::string& name, const std::string& path);
// The grammar of a json_schema format's schema (at `root`, e.g. "text.format.schema"): 400 naming
// `root` when it is missing or not a schema, or the path inside it that cannot be compiled.
std::shared_ptr<const Grammar> schema_format_grammar(const Json* schema, const std::string& root);

}  // namespace minimax::request_fields
