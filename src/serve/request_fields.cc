// The JSON field readers shared by the chat and completions request parsers
// (serve/request_fields.h).
#include "serve/request_fields.h"

#include "runtime/text_model.h"
#include "serve/json_schema_grammar.h"

namespace minimax::request_fields {
namespace {

// Deeper bodies are refused before parsing: copying or printing a JSON value recurses, so an
// adversarial nesting depth would exhaust the stack.
constexpr int kMaxNesting = 64;
constexpr int kMaxChoices = 8;
constexpr size_t kMaxStopStrings = 64;

void check_nesting(std::string_view text, const std::string& param) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) {
        fail_request(param, fmt::format("{}: JSON nested deeper than {} levels",
                                        param.empty() ? "request body" : param, kMaxNesting));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

// nlohmann's message without its "[json.exception.parse_error.101] " prefix; it names the line
// and column.
std::string parse_error_text(const std::exception& e) {
  std::string_view what = e.what();
  if (auto close = what.find("] "); what.starts_with("[json.exception") && close != what.npos) {
    what.remove_prefix(close + 2);
  }
  return std::string(what);
}

// Checks lo <= value <= hi, or lo < value when `open_low`.
void check_range(const std::string& path, double value, double lo, double hi,
                 bool open_low = false) {
  bool ok = (open_low ? value > lo : value >= lo) && value <= hi;
  if (!ok) {
    fail_request(path, fmt::format("{}: {} is out of range; expected {}{}, {}]", path, value,
                                   open_low ? "(" : "[", lo, hi));
  }
}

std::optional<float> bounded(const Fields& f, std::string_view key, double lo, double hi,
                             bool open_low = false) {
  auto v = f.number(key);
  if (!v) return std::nullopt;
  check_range(f.path(key), *v, lo, hi, open_low);
  return static_cast<float>(*v);
}

void parse_sampling(const Fields& f, SamplingOverrides& s) {
  s.temperature = bounded(f, "temperature", 0, 2);
  s.top_p = bounded(f, "top_p", 0, 1, /*open_low=*/true);
  s.min_p = bounded(f, "min_p", 0, 1);
  s.presence_penalty = bounded(f, "presence_penalty", -2, 2);
  s.frequency_penalty = bounded(f, "frequency_penalty", -2, 2);
  s.repetition_penalty = bounded(f, "repetition_penalty", 0, 2, /*open_low=*/true);
  if (auto k = bounded_int(f, "top_k", -1, std::numeric_limits<int32_t>::max())) {
    s.top_k = static_cast<int>(*k);
  }
  // Any 64-bit integer; negative seeds keep their two's-complement bits.
  if (const Json* seed = f.get("seed")) {
    s.seed = seed->is_number_unsigned() ? seed->get<uint64_t>()
                                        : static_cast<uint64_t>(Fields::as_integer(*seed, "seed"));
  }
}

std::vector<std::string> parse_stop(const Fields& f) {
  const Json* stop = f.get("stop");
  if (!stop) return {};
  std::vector<std::string> out;
  auto add = [&](const Json& item, const std::string& path) {
    if (!item.is_string()) wrong_type(path, "a string", item);
    if (item.get_ref<const std::string&>().empty()) {
      fail_request(path, fmt::format("{}: stop strings must not be empty", path));
    }
    out.push_back(item.get<std::string>());
  };
  if (stop->is_string()) {
    add(*stop, "stop");
  } else if (stop->is_array()) {
    if (stop->size() > kMaxStopStrings) {
      fail_request("stop", fmt::format("stop: {} strings given; at most {} are supported",
                                       stop->size(), kMaxStopStrings));
    }
    for (size_t i = 0; i < stop->size(); ++i) add((*stop)[i], fmt::format("stop[{}]", i));
  } else {
    wrong_type("stop", "a string or an array of strings", *stop);
  }
  return out;
}

}  // namespace

Json parse_json(std::string_view text, const std::string& param) {
  check_nesting(text, param);
  // JSON has no raw NUL anywhere (strings escape it as \u0000), and nlohmann's parser takes one
  // as the end of its input: `{...}\0garbage` would pass as `{...}`.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
    fail_request(param, fmt::format("{} is not valid JSON: a NUL byte at byte {}",
                                    param.empty() ? "request body" : param, nul + 1));
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    fail_request(param,
                 fmt::format("{} is not valid JSON: {} (byte {})",
                             param.empty() ? "request body" : param, parse_error_text(e), e.byte));
  } catch (const Json::exception& e) {  // e.g. a number too large for a double
    fail_request(param, fmt::format("{} is not valid JSON: {}",
                                    param.empty() ? "request body" : param, parse_error_text(e)));
  }
}

[[noreturn]] void wrong_type(const std::string& path, std::string_view expected, const Json& got) {
  fail_request(path, fmt::format("{}: expected {}, got {}", path, expected, got.type_name()));
}

std::optional<int64_t> bounded_int(const Fields& f, std::string_view key, int64_t lo, int64_t hi) {
  auto v = f.integer(key);
  if (v && (*v < lo || *v > hi)) {
    fail_request(f.path(key),
                 fmt::format("{}: {} is out of range; expected {}..{}", f.path(key), *v, lo, hi));
  }
  return v;
}

[[noreturn]] void unsupported(const std::string& path, std::string_view what) {
  fail_request(path, fmt::format("{}: {} is not supported", path, what));
}

int32_t token_id(const Json& v, const std::string& path) {
  int64_t id = Fields::as_integer(v, path);
  if (id < 0 || id > std::numeric_limits<int32_t>::max()) {
    fail_request(path, fmt::format("{}: token id {} is out of range", path, id));
  }
  return static_cast<int32_t>(id);
}

// response_format: text (no grammar), json_object (any JSON object) or json_schema (a value of
// the schema; `strict` changes nothing, the output always follows the schema).
std::shared_ptr<const Grammar> parse_response_format(const Json& format) {
  Fields f(format, "response_format");
  const std::optional<std::string> type = f.string("type");
  if (!type) fail_request("response_format.type", "response_format.type: required");
  if (*type == "text") return nullptr;
  if (*type == "json_object") return std::make_shared<const Grammar>(json_object_grammar());
  if (*type != "json_schema")
    fail_request("response_format.type",
                 fmt::format("response_format.type: unknown type '{}' (expected text, "
                             "json_object or json_schema)",
                             *type));
  const Json* spec = f.object("json_schema");
  if (!spec) fail_request("response_format.json_schema", "response_format.json_schema: required");
  Fields s(*spec, "response_format.json_schema");
  s.string("name");
  s.boolean("strict");
  return schema_format_grammar(s.get("schema"), "response_format.json_schema.schema");
}

// The fields chat and completions share; `logprobs` and max_tokens defaults differ and are read
// by the callers.
Json template_kwargs(const Fields& f) {
  const Json* kwargs = f.object("chat_template_kwargs");
  if (kwargs == nullptr) return Json::object();
  for (auto it = kwargs->begin(); it != kwargs->end(); ++it) {
    const std::string& key = it.key();
    if (key != "tools" && !TextModel::reserved_template_variable(key)) continue;
    const std::string path = f.path("chat_template_kwargs") + "." + key;
    const bool request_field =
        key == "tools" || key == "messages" || key == "add_generation_prompt";
    fail_request(path,
                 fmt::format("{}: the server sets this template variable{}", path,
                             request_field ? fmt::format(" (from the request's {})", key) : ""));
  }
  return *kwargs;
}

GenerationFields parse_generation(const Fields& f) {
  GenerationFields g;
  g.model = f.string("model").value_or("");
  parse_sampling(f, g.sampling);
  auto max_tokens = bounded_int(f, "max_tokens", 1, std::numeric_limits<int64_t>::max());
  auto max_completion =
      bounded_int(f, "max_completion_tokens", 1, std::numeric_limits<int64_t>::max());
  g.max_tokens = max_completion ? max_completion : max_tokens;  // vLLM: the newer name wins
  g.stop = parse_stop(f);
  if (const Json* ids = f.array("stop_token_ids")) {
    for (size_t i = 0; i < ids->size(); ++i) {
      g.stop_token_ids.push_back(token_id((*ids)[i], fmt::format("stop_token_ids[{}]", i)));
    }
  }
  g.n = static_cast<int>(bounded_int(f, "n", 1, kMaxChoices).value_or(1));
  if (auto best_of = f.integer("best_of"); best_of && *best_of != g.n) {
    unsupported("best_of", "best_of other than n");
  }
  g.stream = f.boolean("stream").value_or(false);
  if (const Json* options = f.object("stream_options")) {
    if (!g.stream) {
      fail_request("stream_options", "stream_options: only allowed when stream is true");
    }
    Fields o(*options, "stream_options");
    g.include_usage = o.boolean("include_usage").value_or(false);
    g.continuous_usage_stats = o.boolean("continuous_usage_stats").value_or(false);
  }
  if (auto n = bounded_int(f, "prompt_logprobs", 0, kMaxLogprobs)) {
    if (g.stream) {
      fail_request("prompt_logprobs", "prompt_logprobs: not available when stream is true");
    }
    g.prompt_logprobs = static_cast<int>(*n);
  }
  g.ignore_eos = f.boolean("ignore_eos").value_or(false);
  g.skip_special_tokens = f.boolean("skip_special_tokens").value_or(true);
  if (const Json* bias = f.object("logit_bias"); bias && !bias->empty()) {
    unsupported("logit_bias", "logit_bias");
  }
  if (const Json* format = f.object("response_format"))
    g.response_grammar = parse_response_format(*format);
  for (const char* legacy : {"functions", "function_call"}) {
    if (f.get(legacy)) unsupported(legacy, fmt::format("{} (use tools / tool_choice)", legacy));
  }
  if (f.get("guided_json") || f.get("guided_regex") || f.get("guided_choice") ||
      f.get("guided_grammar") || f.get("structured_outputs")) {
    unsupported("guided_json", "guided decoding");
  }
  return g;
}

Json parse_body(std::string_view body) {
  Json root = parse_json(body, "");
  if (!root.is_object()) {
    fail_request("", fmt::format("request body: expected a JSON object, got {}", root.type_name()));
  }
  return root;
}

std::optional<ToolChoice> tool_choice_mode(const Json* choice, bool have_tools) {
  if (!choice) return ToolChoice{have_tools ? ToolChoiceMode::kAuto : ToolChoiceMode::kNone, ""};
  if (!choice->is_string()) return std::nullopt;
  const auto& mode = choice->get_ref<const std::string&>();
  if (mode == "none" || (mode == "auto" && !have_tools))
    return ToolChoice{ToolChoiceMode::kNone, ""};
  if (mode == "auto") return ToolChoice{ToolChoiceMode::kAuto, ""};
  if (mode != "required")
    fail_request("tool_choice", fmt::format("tool_choice: unknown value '{}' (expected auto, none, "
                                            "required or a function object)",
                                            mode));
  if (!have_tools) fail_request("tool_choice", "tool_choice: 'required' needs tools");
  return ToolChoice{ToolChoiceMode::kRequired, ""};
}

ToolChoice named_tool_choice(const Json& tools, const std::string& name, const std::string& path) {
  if (!tools.is_null())
    for (const Json& tool : tools)
      if (tool["function"]["name"] == name) return {ToolChoiceMode::kNamed, name};
  fail_request(path, fmt::format("{}: '{}' is not one of the request's tools", path, name));
}

std::shared_ptr<const Grammar> schema_format_grammar(const Json* schema, const std::string& root) {
  if (!schema) fail_request(root, root + ": required");
  if (!schema->is_object() && !schema->is_boolean()) wrong_type(root, "a schema object", *schema);
  try {
    return std::make_shared<const Grammar>(json_schema_grammar(*schema));
  } catch (const SchemaError& e) {
    const std::string path = e.path().empty() ? root : root + "." + e.path();
    fail_request(path, fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace minimax::request_fields
