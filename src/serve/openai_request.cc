// Request bodies → ChatRequest / CompletionRequest: shared field readers (type and range checks
// that name the field path), then the chat and completions specifics.
#include "serve/openai_request.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <utility>

#include "serve/api_error.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

// Deeper bodies are refused before parsing: copying or printing a JSON value recurses, so an
// adversarial nesting depth would exhaust the stack.
constexpr int kMaxNesting = 64;
constexpr int kMaxChoices = 8;
constexpr int kMaxLogprobs = 20;  // vLLM's default max_logprobs, OpenAI's top_logprobs bound
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

Json parse_json(std::string_view text, const std::string& param) {
  check_nesting(text, param);
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

int32_t token_id(const Json& v, const std::string& path) {
  int64_t id = Fields::as_integer(v, path);
  if (id < 0 || id > std::numeric_limits<int32_t>::max()) {
    fail_request(path, fmt::format("{}: token id {} is out of range", path, id));
  }
  return static_cast<int32_t>(id);
}

// The fields chat and completions share; `logprobs` and max_tokens defaults differ and are read
// by the callers.
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
  if (const Json* format = f.object("response_format")) {
    auto type = Fields(*format, "response_format").string("type");
    if (type != "text") {
      unsupported("response_format.type",
                  fmt::format("response_format type '{}'", type.value_or("(none)")));
    }
  }
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

// ---- Chat messages ------------------------------------------------------------------------

// A string, or an array of {"type":"text","text":…} parts (concatenated, as the M2 template does).
std::string content_text(const Json& content, const std::string& path) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) wrong_type(path, "a string or an array of content parts", content);
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    std::string part_path = fmt::format("{}[{}]", path, i);
    if (!part.is_object()) wrong_type(part_path, "a content part object", part);
    Fields p(part, part_path);
    auto type = p.string("type");
    if (!type) fail_request(p.path("type"), fmt::format("{}: required", p.path("type")));
    if (*type != "text") {
      unsupported(p.path("type"), fmt::format("content part type '{}' (text only)", *type));
    }
    auto piece = p.string("text");
    if (!piece) fail_request(p.path("text"), fmt::format("{}: required", p.path("text")));
    text += *piece;
  }
  return text;
}

Json parse_tool_call(const Json& call, const std::string& path) {
  if (!call.is_object()) wrong_type(path, "an object", call);
  Fields c(call, path);
  Json out;
  if (auto id = c.string("id")) out["id"] = *id;
  if (auto type = c.string("type"); type && *type != "function") {
    unsupported(c.path("type"), fmt::format("tool call type '{}'", *type));
  }
  out["type"] = "function";
  const Json* function = c.object("function");
  if (!function) fail_request(c.path("function"), fmt::format("{}: required", c.path("function")));
  Fields fn(*function, c.path("function"));
  auto name = fn.string("name");
  if (!name || name->empty()) {
    fail_request(fn.path("name"),
                 fmt::format("{}: a non-empty string is required", fn.path("name")));
  }
  Json arguments = Json::object();
  if (const Json* args = fn.get("arguments")) {
    std::string args_path = fn.path("arguments");
    if (args->is_string()) {
      // The template iterates the arguments as a mapping; "" is a call without arguments.
      if (!args->get_ref<const std::string&>().empty()) {
        arguments = parse_json(args->get_ref<const std::string&>(), args_path);
      }
    } else {
      arguments = *args;
    }
    if (!arguments.is_object()) wrong_type(args_path, "a JSON object (or its text)", arguments);
  }
  out["function"] = {{"name", *name}, {"arguments", std::move(arguments)}};
  return out;
}

Json parse_message(const Json& message, size_t index) {
  std::string path = fmt::format("messages[{}]", index);
  if (!message.is_object()) wrong_type(path, "a message object", message);
  Fields m(message, path);
  auto role = m.string("role");
  if (!role) fail_request(m.path("role"), fmt::format("{}: required", m.path("role")));
  if (*role == "developer") role = "system";  // OpenAI's newer name for system instructions
  if (*role != "system" && *role != "user" && *role != "assistant" && *role != "tool") {
    fail_request(m.path("role"),
                 fmt::format("{}: unknown role '{}' (expected system, developer, user, assistant "
                             "or tool)",
                             m.path("role"), *role));
  }
  Json out;
  out["role"] = *role;
  const Json* content = m.get("content");
  if (content) {
    out["content"] = content_text(*content, m.path("content"));
  } else if (*role == "assistant") {
    out["content"] = nullptr;  // an assistant turn may be only tool calls
  } else {
    fail_request(m.path("content"),
                 fmt::format("{}: required for role {}", m.path("content"), *role));
  }
  if (auto name = m.string("name")) out["name"] = *name;
  if (*role == "assistant") {
    auto reasoning = m.string("reasoning_content");
    if (!reasoning) reasoning = m.string("reasoning");
    if (reasoning) out["reasoning_content"] = *reasoning;
    if (const Json* calls = m.array("tool_calls"); calls && !calls->empty()) {
      Json parsed = Json::array();
      for (size_t j = 0; j < calls->size(); ++j) {
        parsed.push_back(parse_tool_call((*calls)[j], fmt::format("{}.tool_calls[{}]", path, j)));
      }
      out["tool_calls"] = std::move(parsed);
    }
  }
  if (*role == "tool") {
    if (auto id = m.string("tool_call_id")) out["tool_call_id"] = *id;
  }
  // Everything else as given: templates may read more (the M2 template's current_date).
  for (const auto& [key, value] : message.items()) {
    if (!out.contains(key) && key != "reasoning" && key != "tool_calls") out[key] = value;
  }
  return out;
}

Json parse_tools(const Fields& f) {
  const Json* tools = f.array("tools");
  if (!tools || tools->empty()) return nullptr;
  for (size_t i = 0; i < tools->size(); ++i) {
    const Json& tool = (*tools)[i];
    std::string path = fmt::format("tools[{}]", i);
    if (!tool.is_object()) wrong_type(path, "a tool object", tool);
    Fields t(tool, path);
    auto type = t.string("type");
    if (!type) fail_request(t.path("type"), fmt::format("{}: required", t.path("type")));
    if (*type != "function") unsupported(t.path("type"), fmt::format("tool type '{}'", *type));
    const Json* function = t.object("function");
    if (!function) {
      fail_request(t.path("function"), fmt::format("{}: required", t.path("function")));
    }
    Fields fn(*function, t.path("function"));
    auto name = fn.string("name");
    if (!name || name->empty()) {
      fail_request(fn.path("name"),
                   fmt::format("{}: a non-empty string is required", fn.path("name")));
    }
    fn.string("description");
    fn.object("parameters");
    fn.boolean("strict");
  }
  return *tools;
}

ToolChoice parse_tool_choice(const Fields& f, const Json& tools) {
  bool have_tools = !tools.is_null();
  const Json* choice = f.get("tool_choice");
  if (!choice) return {have_tools ? ToolChoiceMode::kAuto : ToolChoiceMode::kNone, ""};
  if (choice->is_string()) {
    const auto& mode = choice->get_ref<const std::string&>();
    if (mode == "none" || (mode == "auto" && !have_tools)) return {ToolChoiceMode::kNone, ""};
    if (mode == "auto") return {ToolChoiceMode::kAuto, ""};
    if (mode != "required") {
      fail_request("tool_choice", fmt::format("tool_choice: unknown value '{}' (expected auto, "
                                              "none, required or a function object)",
                                              mode));
    }
    if (!have_tools) fail_request("tool_choice", "tool_choice: 'required' needs tools");
    return {ToolChoiceMode::kRequired, ""};
  }
  if (!choice->is_object()) wrong_type("tool_choice", "a string or an object", *choice);
  Fields c(*choice, "tool_choice");
  if (c.string("type") != "function") {
    fail_request("tool_choice.type", "tool_choice.type: expected \"function\"");
  }
  const Json* function = c.object("function");
  auto name = function ? Fields(*function, "tool_choice.function").string("name") : std::nullopt;
  if (!name) fail_request("tool_choice.function.name", "tool_choice.function.name: required");
  if (have_tools) {
    for (const Json& tool : tools) {
      if (tool["function"]["name"] == *name) return {ToolChoiceMode::kNamed, *name};
    }
  }
  fail_request(
      "tool_choice.function.name",
      fmt::format("tool_choice.function.name: '{}' is not one of the request's tools", *name));
}

}  // namespace

ChatRequest parse_chat_request(std::string_view body) {
  Json root = parse_body(body);
  Fields f(root, "");
  ChatRequest request;
  request.generation = parse_generation(f);
  GenerationFields& g = request.generation;
  g.logprobs = f.boolean("logprobs").value_or(false);
  if (auto top = bounded_int(f, "top_logprobs", 0, kMaxLogprobs)) {
    if (!g.logprobs) fail_request("top_logprobs", "top_logprobs: needs logprobs set to true");
    g.top_logprobs = static_cast<int>(*top);
  }

  const Json* messages = f.array("messages");
  if (!messages) fail_request("messages", "messages: required");
  if (messages->empty()) fail_request("messages", "messages: must not be empty");
  for (size_t i = 0; i < messages->size(); ++i) {
    request.messages.push_back(parse_message((*messages)[i], i));
  }

  request.tools = parse_tools(f);
  request.tool_choice = parse_tool_choice(f, request.tools);
  request.parallel_tool_calls = f.boolean("parallel_tool_calls").value_or(true);
  if (const Json* kwargs = f.object("chat_template_kwargs")) request.chat_template_kwargs = *kwargs;
  if (f.get("chat_template")) unsupported("chat_template", "a per-request chat_template");
  request.add_generation_prompt = f.boolean("add_generation_prompt").value_or(true);
  request.continue_final_message = f.boolean("continue_final_message").value_or(false);
  if (request.continue_final_message) {
    if (request.add_generation_prompt && f.get("add_generation_prompt")) {
      fail_request("continue_final_message",
                   "continue_final_message: cannot be combined with add_generation_prompt");
    }
    request.add_generation_prompt = false;
    if (request.messages.back()["role"] != "assistant") {
      fail_request("continue_final_message",
                   "continue_final_message: the last message must be an assistant message");
    }
  }
  return request;
}

CompletionRequest parse_completion_request(std::string_view body) {
  Json root = parse_body(body);
  Fields f(root, "");
  CompletionRequest request;
  request.generation = parse_generation(f);
  GenerationFields& g = request.generation;
  if (!g.max_tokens) g.max_tokens = 16;  // OpenAI's and vLLM's default for completions
  if (auto top = bounded_int(f, "logprobs", 0, kMaxLogprobs)) {
    g.logprobs = true;
    g.top_logprobs = static_cast<int>(*top);
  }
  request.echo = f.boolean("echo").value_or(false);
  if (auto suffix = f.string("suffix"); suffix && !suffix->empty()) unsupported("suffix", "suffix");

  const Json* prompt = f.get("prompt");
  if (!prompt) fail_request("prompt", "prompt: required");
  // A list holding one prompt is that prompt; several are a batch, which we do not take.
  const Json* single = prompt;
  std::string path = "prompt";
  if (prompt->is_array() && !prompt->empty() &&
      ((*prompt)[0].is_string() || (*prompt)[0].is_array())) {
    if (prompt->size() > 1) {
      fail_request("prompt", fmt::format("prompt: {} prompts in one request are not supported; "
                                         "send one request per prompt",
                                         prompt->size()));
    }
    single = &(*prompt)[0];
    path = "prompt[0]";
  }
  if (single->is_string()) {
    if (single->get_ref<const std::string&>().empty()) {
      fail_request(path, fmt::format("{}: must not be empty", path));
    }
    request.prompt_text = single->get<std::string>();
  } else if (single->is_array()) {
    if (single->empty()) fail_request(path, fmt::format("{}: must not be empty", path));
    for (size_t i = 0; i < single->size(); ++i) {
      request.prompt_tokens.push_back(token_id((*single)[i], fmt::format("{}[{}]", path, i)));
    }
  } else {
    wrong_type(path, "a string or an array of token ids", *single);
  }
  return request;
}

}  // namespace minimax
