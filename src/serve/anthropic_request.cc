// Anthropic Messages request bodies → MessagesRequest (serve/anthropic_request.h).
#include "serve/anthropic_request.h"

#include <fmt/format.h>

#include <limits>
#include <string>
#include <vector>

#include "serve/api_error.h"
#include "serve/json_schema_grammar.h"
#include "serve/request_fields.h"

namespace minimax {
namespace {

using request_fields::bounded_int;
using request_fields::Fields;
using request_fields::Json;
using request_fields::parse_body;
using request_fields::unsupported;
using request_fields::wrong_type;

constexpr size_t kMaxStopSequences = 64;  // as the OpenAI side's `stop`: bounds per-token matching

[[noreturn]] void required(const std::string& path) {
  fail_request(path, fmt::format("{}: required", path));
}

std::string required_string(const Fields& f, std::string_view key) {
  std::optional<std::string> value = f.string(key);
  if (!value) required(f.path(key));
  return *value;
}

// Several text blocks of one message (or of `system`) are separate paragraphs to Claude; the
// templates take one string, so they are joined by a newline.
void append_text(std::string& to, const std::string& text) {
  if (!to.empty()) to += '\n';
  to += text;
}

// The type of content block `block`, checked to be an object with a string "type".
std::string block_type(const Json& block, const std::string& path) {
  if (!block.is_object()) wrong_type(path, "a content block object", block);
  return required_string(Fields(block, path), "type");
}

[[noreturn]] void unsupported_block(const std::string& path, const std::string& type) {
  if (type == "image" || type == "document" || type == "search_result")
    unsupported(path, fmt::format("content block type '{}' (the model reads text only)", type));
  fail_request(path, fmt::format("{}: content block type '{}' is not supported here", path, type));
}

// `system`: a string, or an array of text blocks. Claude Code's first system block is a billing
// header with a per-request hash; it says nothing to the model and, first in the prompt, would
// defeat prefix caching of everything after it (vLLM drops it too).
std::optional<std::string> system_text(const Fields& f) {
  const Json* system = f.get("system");
  if (!system) return std::nullopt;
  if (system->is_string()) return system->get<std::string>();
  if (!system->is_array()) wrong_type("system", "a string or an array of text blocks", *system);
  std::string text;
  for (size_t i = 0; i < system->size(); ++i) {
    const std::string path = fmt::format("system[{}]", i);
    const std::string type = block_type((*system)[i], path);
    if (type != "text") unsupported_block(path + ".type", type);
    const std::string part = required_string(Fields((*system)[i], path), "text");
    if (part.starts_with("x-anthropic-billing-header:")) continue;
    append_text(text, part);
  }
  return text;
}

// A tool_result's `content`: a string or an array of text blocks.
std::string tool_result_text(const Fields& block) {
  const Json* content = block.get("content");
  if (!content) return "";
  if (content->is_string()) return content->get<std::string>();
  const std::string path = block.path("content");
  if (!content->is_array()) wrong_type(path, "a string or an array of text blocks", *content);
  std::string text;
  for (size_t i = 0; i < content->size(); ++i) {
    const std::string item = fmt::format("{}[{}]", path, i);
    const std::string type = block_type((*content)[i], item);
    if (type != "text") unsupported_block(item + ".type", type);
    append_text(text, required_string(Fields((*content)[i], item), "text"));
  }
  return text;
}

// One Anthropic message → template messages, appended to `out`. A user message's tool_result
// blocks become tool messages (in order, before its text, which Anthropic requires to follow
// them); an assistant message is one message with content, reasoning_content and tool_calls.
void convert_message(const Json& message, size_t index, Json& out) {
  const std::string path = fmt::format("messages[{}]", index);
  if (!message.is_object()) wrong_type(path, "a message object", message);
  Fields m(message, path);
  const std::string role = required_string(m, "role");
  if (role != "user" && role != "assistant")
    fail_request(m.path("role"),
                 fmt::format("{}: unknown role '{}' (expected user or assistant; the system "
                             "prompt is the top-level `system` field)",
                             m.path("role"), role));
  const Json* content = m.get("content");
  if (!content) required(m.path("content"));
  if (content->is_string()) {
    out.push_back({{"role", role}, {"content", content->get<std::string>()}});
    return;
  }
  if (!content->is_array())
    wrong_type(m.path("content"), "a string or an array of blocks", *content);
  std::string text, reasoning;
  bool has_text = false;
  Json calls = Json::array();
  for (size_t i = 0; i < content->size(); ++i) {
    const std::string bpath = fmt::format("{}.content[{}]", path, i);
    const Json& block = (*content)[i];
    const std::string type = block_type(block, bpath);
    Fields b(block, bpath);
    if (type == "text") {
      append_text(text, required_string(b, "text"));
      has_text = true;
    } else if (role == "assistant" && type == "thinking") {
      append_text(reasoning, required_string(b, "thinking"));
      b.string("signature");  // not checked: this server signs nothing
    } else if (role == "assistant" && type == "redacted_thinking") {
      // Encrypted reasoning of another provider: nothing the template could show.
    } else if (role == "assistant" && type == "tool_use") {
      const std::string id = required_string(b, "id");
      const std::string name = required_string(b, "name");
      const Json* input = b.get("input");
      if (!input) required(b.path("input"));
      if (!input->is_object()) wrong_type(b.path("input"), "an object", *input);
      calls.push_back({{"id", id},
                       {"type", "function"},
                       {"function", {{"name", name}, {"arguments", *input}}}});
    } else if (role == "user" && type == "tool_result") {
      b.boolean("is_error");  // the templates have no place for it; the text says what failed
      out.push_back({{"role", "tool"},
                     {"tool_call_id", required_string(b, "tool_use_id")},
                     {"content", tool_result_text(b)}});
    } else {
      unsupported_block(b.path("type"), type);
    }
  }
  if (role == "user") {
    if (has_text || content->empty()) out.push_back({{"role", "user"}, {"content", text}});
    return;
  }
  Json assistant = {{"role", "assistant"}, {"content", has_text ? Json(text) : Json(nullptr)}};
  if (!reasoning.empty()) assistant["reasoning_content"] = reasoning;
  if (!calls.empty()) assistant["tool_calls"] = std::move(calls);
  out.push_back(std::move(assistant));
}

// `tools`: custom tools {name, description?, input_schema} → {"type":"function","function":
// {"name","description","parameters"}} (the form the templates print). Anthropic's server tools
// (web search, code execution, the computer-use family: a `type` other than "custom") run on
// Anthropic's side and have no equivalent here.
Json convert_tools(const Fields& f) {
  const Json* tools = f.array("tools");
  if (!tools || tools->empty()) return nullptr;
  Json out = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const std::string path = fmt::format("tools[{}]", i);
    const Json& tool = (*tools)[i];
    if (!tool.is_object()) wrong_type(path, "a tool object", tool);
    Fields t(tool, path);
    if (auto type = t.string("type"); type && *type != "custom")
      unsupported(t.path("type"), fmt::format("server tool type '{}'", *type));
    const std::string name = required_string(t, "name");
    if (name.empty()) fail_request(t.path("name"), t.path("name") + ": must not be empty");
    Json function = {{"name", name}};
    if (auto description = t.string("description")) function["description"] = *description;
    const Json* schema = t.object("input_schema");
    if (!schema) required(t.path("input_schema"));
    function["parameters"] = *schema;
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

// `tool_choice`: {"type": auto | any | tool | none, "name"?, "disable_parallel_tool_use"?}.
// any → OpenAI's required, tool → a named function: both constrained decoding.
void convert_tool_choice(const Fields& f, ChatRequest& chat) {
  const bool have_tools = !chat.tools.is_null();
  chat.tool_choice = {have_tools ? ToolChoiceMode::kAuto : ToolChoiceMode::kNone, ""};
  const Json* choice = f.object("tool_choice");
  if (!choice) return;
  Fields c(*choice, "tool_choice");
  const std::string type = required_string(c, "type");
  chat.parallel_tool_calls = !c.boolean("disable_parallel_tool_use").value_or(false);
  if (type == "none") {
    chat.tool_choice.mode = ToolChoiceMode::kNone;
  } else if (type == "auto") {
    // auto without tools means none, as on the OpenAI side
  } else if (type == "any" || type == "tool") {
    if (!have_tools)
      fail_request("tool_choice", fmt::format("tool_choice: '{}' needs tools", type));
    if (type == "any") {
      chat.tool_choice.mode = ToolChoiceMode::kRequired;
      return;
    }
    const std::string name = required_string(c, "name");
    for (const Json& tool : chat.tools)
      if (tool["function"]["name"] == name) {
        chat.tool_choice = {ToolChoiceMode::kNamed, name};
        return;
      }
    fail_request("tool_choice.name",
                 fmt::format("tool_choice.name: '{}' is not one of the request's tools", name));
  } else {
    fail_request("tool_choice.type",
                 fmt::format("tool_choice.type: unknown value '{}' (expected auto, any, tool or "
                             "none)",
                             type));
  }
}

void parse_thinking(const Fields& f, MessagesRequest& request) {
  const Json* thinking = f.object("thinking");
  if (!thinking) return;
  Fields t(*thinking, "thinking");
  const std::string type = required_string(t, "type");
  t.string("display");  // summarized / omitted: the reasoning is always returned whole
  if (type == "disabled") {
    request.thinking = ThinkingRequest::kDisabled;
  } else if (type == "adaptive") {
    request.thinking = ThinkingRequest::kAdaptive;
  } else if (type == "enabled") {
    request.thinking = ThinkingRequest::kEnabled;
    request.budget_tokens = bounded_int(t, "budget_tokens", 1, std::numeric_limits<int64_t>::max());
    if (!request.budget_tokens) required("thinking.budget_tokens");
  } else {
    fail_request("thinking.type",
                 fmt::format("thinking.type: unknown value '{}' (expected enabled, disabled or "
                             "adaptive)",
                             type));
  }
}

// The fields /v1/messages and count_tokens share: the conversation, tools and thinking.
MessagesRequest parse_conversation(const Json& root) {
  Fields f(root, "");
  MessagesRequest request;
  ChatRequest& chat = request.chat;
  chat.generation.model = required_string(f, "model");
  Json messages = Json::array();
  if (std::optional<std::string> system = system_text(f))
    messages.push_back({{"role", "system"}, {"content", *system}});
  const Json* list = f.array("messages");
  if (!list) required("messages");
  if (list->empty()) fail_request("messages", "messages: must not be empty");
  for (size_t i = 0; i < list->size(); ++i) convert_message((*list)[i], i, messages);
  chat.messages = std::move(messages);
  // A final assistant message is a prefill: the answer continues it.
  if ((*list).back().value("role", "") == "assistant") {
    chat.continue_final_message = true;
    chat.add_generation_prompt = false;
  }
  chat.tools = convert_tools(f);
  convert_tool_choice(f, chat);
  chat.chat_template_kwargs = request_fields::template_kwargs(f);
  parse_thinking(f, request);
  if (const Json* servers = f.array("mcp_servers"); servers && !servers->empty())
    unsupported("mcp_servers", "mcp_servers (connecting to MCP servers)");
  if (f.get("container")) unsupported("container", "container (code execution)");
  return request;
}

std::optional<float> unit_interval(const Fields& f, std::string_view key, bool open_low) {
  std::optional<double> v = f.number(key);
  if (!v) return std::nullopt;
  if ((open_low ? *v <= 0 : *v < 0) || *v > 1)
    fail_request(f.path(key), fmt::format("{}: {} is out of range; expected {}0, 1]", f.path(key),
                                          *v, open_low ? "(" : "["));
  return static_cast<float>(*v);
}

// output_config: `format` {"type":"json_schema","schema"} constrains the answer as
// response_format json_schema does on the OpenAI side; `effort` has no equivalent and is ignored.
void parse_output_config(const Fields& f, GenerationFields& g) {
  const Json* config = f.object("output_config");
  if (!config) return;
  Fields c(*config, "output_config");
  c.string("effort");
  const Json* format = c.object("format");
  if (!format) return;
  Fields fmt_fields(*format, "output_config.format");
  const std::string type = required_string(fmt_fields, "type");
  if (type != "json_schema")
    fail_request("output_config.format.type",
                 fmt::format("output_config.format.type: unknown value '{}' (expected "
                             "json_schema)",
                             type));
  const std::string root = "output_config.format.schema";
  const Json* schema = fmt_fields.object("schema");
  if (!schema) required(root);
  try {
    g.response_grammar = std::make_shared<const Grammar>(json_schema_grammar(*schema));
  } catch (const SchemaError& e) {
    const std::string path = e.path().empty() ? root : root + "." + e.path();
    fail_request(path, fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace

MessagesRequest parse_messages_request(std::string_view body) {
  const Json root = parse_body(body);
  MessagesRequest request = parse_conversation(root);
  Fields f(root, "");
  GenerationFields& g = request.chat.generation;
  g.max_tokens = bounded_int(f, "max_tokens", 1, std::numeric_limits<int64_t>::max());
  if (!g.max_tokens) required("max_tokens");
  if (request.budget_tokens && *request.budget_tokens >= *g.max_tokens)
    fail_request("thinking.budget_tokens",
                 fmt::format("thinking.budget_tokens: {} must be less than max_tokens ({})",
                             *request.budget_tokens, *g.max_tokens));
  if (const Json* stops = f.array("stop_sequences")) {
    if (stops->size() > kMaxStopSequences)
      fail_request("stop_sequences", fmt::format("stop_sequences: {} given; at most {}",
                                                 stops->size(), kMaxStopSequences));
    for (size_t i = 0; i < stops->size(); ++i) {
      const std::string path = fmt::format("stop_sequences[{}]", i);
      const Json& stop = (*stops)[i];
      if (!stop.is_string()) wrong_type(path, "a string", stop);
      if (stop.get_ref<const std::string&>().empty())
        fail_request(path, path + ": must not be empty");
      g.stop.push_back(stop.get<std::string>());
    }
  }
  g.sampling.temperature = unit_interval(f, "temperature", false);  // Anthropic's range: [0, 1]
  g.sampling.top_p = unit_interval(f, "top_p", true);
  if (auto k = bounded_int(f, "top_k", 0, std::numeric_limits<int32_t>::max()))
    g.sampling.top_k = static_cast<int>(*k);
  g.stream = f.boolean("stream").value_or(false);
  f.object("metadata");  // user_id: nothing to do with it
  parse_output_config(f, g);
  return request;
}

MessagesRequest parse_count_tokens_request(std::string_view body) {
  return parse_conversation(parse_body(body));
}

void apply_thinking(MessagesRequest& request, ParserFormat format) {
  if (format != ParserFormat::kMinimaxM3 || request.thinking == ThinkingRequest::kDefault) return;
  const char* mode = request.thinking == ThinkingRequest::kEnabled    ? "enabled"
                     : request.thinking == ThinkingRequest::kDisabled ? "disabled"
                                                                      : "adaptive";
  request.chat.chat_template_kwargs["thinking_mode"] = mode;
}

}  // namespace minimax
