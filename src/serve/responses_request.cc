// Responses API request bodies → ResponsesRequest (serve/responses_request.h).
#include "serve/responses_request.h"

#include <fmt/format.h>

#include <limits>

#include "serve/api_error.h"
#include "serve/json_schema_grammar.h"
#include "serve/request_fields.h"

namespace minimax {
namespace {

using request_fields::bounded_int;
using request_fields::Fields;
using request_fields::Json;
using request_fields::named_tool_choice;
using request_fields::parse_body;
using request_fields::parse_json;
using request_fields::schema_format_grammar;
using request_fields::tool_choice_mode;
using request_fields::unsupported;
using request_fields::wrong_type;

// Names unique to this file: the serve sources are compiled as unity batches, where two files'
// anonymous-namespace helpers of the same name would collide.
[[noreturn]] void field_required(const std::string& path) {
  fail_request(path, fmt::format("{}: required", path));
}

std::string required_text(const Fields& f, std::string_view key) {
  std::optional<std::string> value = f.string(key);
  if (!value) field_required(f.path(key));
  return *value;
}

// A message's content: a string, or an array of text parts (input_text from the client,
// output_text from an earlier response; "text" as the chat API spells it), concatenated.
std::string item_text(const Json& content, const std::string& path) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) wrong_type(path, "a string or an array of content parts", content);
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string part_path = fmt::format("{}[{}]", path, i);
    const Json& part = content[i];
    if (!part.is_object()) wrong_type(part_path, "a content part object", part);
    Fields p(part, part_path);
    const std::string type = required_text(p, "type");
    if (type == "input_image" || type == "input_file" || type == "input_audio")
      unsupported(p.path("type"),
                  fmt::format("content part type '{}' (the model reads text only)", type));
    if (type != "input_text" && type != "output_text" && type != "text")
      fail_request(p.path("type"),
                   fmt::format("{}: unknown content part type '{}' (expected input_text or "
                               "output_text)",
                               p.path("type"), type));
    text += required_text(p, "text");
  }
  return text;
}

// A reasoning item's text: its content (reasoning_text parts), else its summary (summary_text).
std::string reasoning_item_text(const Fields& item) {
  std::string text;
  for (const char* key : {"content", "summary"}) {
    const Json* parts = item.array(key);
    if (!parts) continue;
    for (size_t i = 0; i < parts->size(); ++i) {
      const std::string path = fmt::format("{}[{}]", item.path(key), i);
      if (!(*parts)[i].is_object()) wrong_type(path, "an object", (*parts)[i]);
      text += required_text(Fields((*parts)[i], path), "text");
    }
    if (!text.empty()) break;
  }
  return text;
}

bool is_assistant(const Json& messages) {
  return !messages.empty() && messages.back()["role"] == "assistant";
}

void add_message(const Fields& item, Json& out) {
  std::string role = required_text(item, "role");
  if (role == "developer") role = "system";
  if (role != "user" && role != "system" && role != "assistant")
    fail_request(item.path("role"),
                 fmt::format("{}: unknown role '{}' (expected user, system, developer or "
                             "assistant)",
                             item.path("role"), role));
  const Json* content = item.get("content");
  if (!content) field_required(item.path("content"));
  std::string text = item_text(*content, item.path("content"));
  // The text of an assistant turn whose reasoning came as the item before it.
  if (role == "assistant" && is_assistant(out) && out.back()["content"].is_null() &&
      !out.back().contains("tool_calls")) {
    out.back()["content"] = std::move(text);
    return;
  }
  out.push_back({{"role", role}, {"content", std::move(text)}});
}

// A function_call item joins the assistant message before it (its text, its other calls).
void add_function_call(const Fields& item, Json& out) {
  const std::string call_id = required_text(item, "call_id");
  const std::string name = required_text(item, "name");
  if (name.empty()) fail_request(item.path("name"), item.path("name") + ": must not be empty");
  const std::string text = required_text(item, "arguments");
  // The template iterates the arguments as a mapping; "" is a call without arguments.
  Json arguments = text.empty() ? Json::object() : parse_json(text, item.path("arguments"));
  if (!arguments.is_object())
    wrong_type(item.path("arguments"), "the text of a JSON object", arguments);
  Json call = {{"id", call_id},
               {"type", "function"},
               {"function", {{"name", name}, {"arguments", std::move(arguments)}}}};
  if (!is_assistant(out)) out.push_back({{"role", "assistant"}, {"content", nullptr}});
  out.back()["tool_calls"].push_back(std::move(call));
}

void add_input_item(const Json& value, size_t index, Json& out) {
  const std::string path = fmt::format("input[{}]", index);
  if (!value.is_object()) wrong_type(path, "an input item object", value);
  Fields item(value, path);
  // A message may leave out its type (EasyInputMessage).
  const std::string type = item.string("type").value_or("message");
  if (type == "message") {
    add_message(item, out);
  } else if (type == "function_call") {
    add_function_call(item, out);
  } else if (type == "function_call_output") {
    const Json* output = item.get("output");
    if (!output) field_required(item.path("output"));
    out.push_back({{"role", "tool"},
                   {"tool_call_id", required_text(item, "call_id")},
                   {"content", item_text(*output, item.path("output"))}});
  } else if (type == "reasoning") {
    // Reasoning starts the assistant turn it belongs to; its text and calls follow as items.
    out.push_back({{"role", "assistant"},
                   {"content", nullptr},
                   {"reasoning_content", reasoning_item_text(item)}});
  } else if (type == "item_reference") {
    unsupported(item.path("type"), "item type 'item_reference' (send the item itself)");
  } else {
    fail_request(item.path("type"),
                 fmt::format("{}: item type '{}' is not supported (expected message, "
                             "function_call, function_call_output or reasoning)",
                             item.path("type"), type));
  }
}

Json input_messages(const Fields& f) {
  const Json* input = f.get("input");
  if (!input) field_required("input");
  if (input->is_string()) return Json::array({{{"role", "user"}, {"content", *input}}});
  if (!input->is_array()) wrong_type("input", "a string or an array of input items", *input);
  Json out = Json::array();
  for (size_t i = 0; i < input->size(); ++i) add_input_item((*input)[i], i, out);
  return out;
}

// Responses tools {"type":"function","name","description","parameters","strict"} → the chat form
// {"type":"function","function":{…}} that the templates print and the tool grammar reads. The
// hosted tools (web search, file search, computer use, MCP, code interpreter…) run on OpenAI's
// side and have no equivalent here.
Json convert_function_tools(const Fields& f) {
  const Json* tools = f.array("tools");
  if (!tools || tools->empty()) return nullptr;
  Json out = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const std::string path = fmt::format("tools[{}]", i);
    const Json& tool = (*tools)[i];
    if (!tool.is_object()) wrong_type(path, "a tool object", tool);
    Fields t(tool, path);
    const std::string type = required_text(t, "type");
    if (type != "function") unsupported(t.path("type"), fmt::format("tool type '{}'", type));
    const std::string name = required_text(t, "name");
    if (name.empty()) fail_request(t.path("name"), t.path("name") + ": must not be empty");
    Json function = {{"name", name}};
    if (auto description = t.string("description")) function["description"] = *description;
    if (const Json* parameters = t.object("parameters")) function["parameters"] = *parameters;
    t.boolean("strict");  // the arguments always follow the schema under tool_choice required
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

// tool_choice: "auto" | "none" | "required" | {"type":"function","name"}.
ToolChoice convert_responses_tool_choice(const Fields& f, const Json& tools) {
  const Json* choice = f.get("tool_choice");
  if (auto mode = tool_choice_mode(choice, !tools.is_null())) return *mode;
  if (!choice->is_object()) wrong_type("tool_choice", "a string or an object", *choice);
  Fields c(*choice, "tool_choice");
  const std::string type = required_text(c, "type");
  if (type != "function") unsupported("tool_choice.type", fmt::format("tool_choice '{}'", type));
  return named_tool_choice(tools, required_text(c, "name"), "tool_choice.name");
}

std::optional<float> sampling_value(const Fields& f, std::string_view key, double lo, double hi,
                                    bool open_low) {
  std::optional<double> v = f.number(key);
  if (!v) return std::nullopt;
  if ((open_low ? *v <= lo : *v < lo) || *v > hi)
    fail_request(f.path(key), fmt::format("{}: {} is out of range; expected {}{}, {}]", f.path(key),
                                          *v, open_low ? "(" : "[", lo, hi));
  return static_cast<float>(*v);
}

// text.format: text (free), json_object, or json_schema {"name","schema","strict"} (the schema
// sits in the format itself here, not under json_schema as in chat's response_format).
std::shared_ptr<const Grammar> text_format_grammar(const Fields& f) {
  const Json* text = f.object("text");
  if (!text) return nullptr;
  Fields t(*text, "text");
  const Json* format = t.object("format");
  if (!format) return nullptr;
  Fields fm(*format, "text.format");
  const std::string type = required_text(fm, "type");
  if (type == "text") return nullptr;
  if (type == "json_object") return std::make_shared<const Grammar>(json_object_grammar());
  if (type != "json_schema")
    fail_request("text.format.type", fmt::format("text.format.type: unknown type '{}' (expected "
                                                 "text, json_object or json_schema)",
                                                 type));
  fm.string("name");
  fm.boolean("strict");
  return schema_format_grammar(fm.get("schema"), "text.format.schema");
}

// Fields the server cannot honour are refused rather than dropped.
void refuse_unsupported(const Fields& f) {
  if (f.boolean("background").value_or(false))
    unsupported("background", "background (responses run while the request is open)");
  if (f.get("conversation")) unsupported("conversation", "conversation (use previous_response_id)");
  if (f.get("prompt")) unsupported("prompt", "prompt (stored prompt templates)");
  if (f.get("max_tool_calls")) unsupported("max_tool_calls", "max_tool_calls");
  if (auto n = f.integer("top_logprobs"); n && *n > 0) unsupported("top_logprobs", "top_logprobs");
  if (auto truncation = f.string("truncation");
      truncation && *truncation != "disabled" && *truncation != "auto")
    fail_request("truncation", fmt::format("truncation: unknown value '{}' (expected auto or "
                                           "disabled)",
                                           *truncation));
}

}  // namespace

ResponsesRequest parse_responses_request(std::string_view body) {
  const Json root = parse_body(body);
  Fields f(root, "");
  ResponsesRequest request;
  ChatRequest& chat = request.chat;
  GenerationFields& g = chat.generation;
  g.model = f.string("model").value_or("");
  chat.messages = input_messages(f);
  request.instructions = f.string("instructions");
  request.previous_response_id = f.string("previous_response_id").value_or("");
  request.store = f.boolean("store").value_or(true);
  g.max_tokens = bounded_int(f, "max_output_tokens", 1, std::numeric_limits<int64_t>::max());
  g.sampling.temperature = sampling_value(f, "temperature", 0, 2, false);
  g.sampling.top_p = sampling_value(f, "top_p", 0, 1, true);
  g.stream = f.boolean("stream").value_or(false);
  g.response_grammar = text_format_grammar(f);
  chat.tools = convert_function_tools(f);
  chat.tool_choice = convert_responses_tool_choice(f, chat.tools);
  chat.parallel_tool_calls = f.boolean("parallel_tool_calls").value_or(true);
  refuse_unsupported(f);
  if (const Json* reasoning = f.object("reasoning")) {  // effort / summary: nothing to choose
    Fields r(*reasoning, "reasoning");
    r.string("effort");
    r.string("summary");
  }
  f.array("include");  // e.g. reasoning.encrypted_content: nothing here is encrypted
  const Json* metadata = f.object("metadata");

  auto or_null = [](const auto& v) { return v ? Json(*v) : Json(nullptr); };
  Json& echo = request.echo;
  echo["instructions"] = or_null(request.instructions);
  echo["max_output_tokens"] = or_null(g.max_tokens);
  echo["metadata"] = metadata ? *metadata : Json::object();
  echo["parallel_tool_calls"] = chat.parallel_tool_calls;
  echo["previous_response_id"] =
      request.previous_response_id.empty() ? Json(nullptr) : Json(request.previous_response_id);
  echo["reasoning"] = {{"effort", nullptr}, {"summary", nullptr}};
  echo["store"] = request.store;
  echo["temperature"] = or_null(g.sampling.temperature);
  echo["text"] = {{"format", {{"type", "text"}}}};
  if (const Json* text = f.object("text"); text && text->contains("format")) echo["text"] = *text;
  echo["tool_choice"] = f.get("tool_choice") ? root["tool_choice"] : Json("auto");
  echo["tools"] = f.get("tools") ? root["tools"] : Json::array();
  echo["top_p"] = or_null(g.sampling.top_p);
  echo["truncation"] = f.string("truncation").value_or("disabled");
  echo["user"] = or_null(f.string("user"));
  return request;
}

Json conversation_messages(const std::optional<std::string>& instructions, const Json& previous,
                           const Json& input) {
  Json messages = Json::array();
  if (instructions) messages.push_back({{"role", "system"}, {"content", *instructions}});
  if (previous.is_array())
    for (const Json& message : previous) messages.push_back(message);
  for (const Json& message : input) messages.push_back(message);
  if (messages.empty()) fail_request("input", "input: no messages (and no previous_response_id)");
  return messages;
}

}  // namespace minimax
