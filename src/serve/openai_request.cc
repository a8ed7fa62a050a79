// Request bodies → ChatRequest / CompletionRequest: the chat messages, tools and tool_choice,
// and the chat and completions specifics; the shared field readers are serve/request_fields.h.
#include "serve/openai_request.h"

#include <fmt/format.h>

#include <limits>
#include <utility>

#include "serve/api_error.h"
#include "serve/request_fields.h"

namespace minimax {
namespace {

using request_fields::bounded_int;
using request_fields::Fields;
using request_fields::Json;
using request_fields::kMaxLogprobs;
using request_fields::named_tool_choice;
using request_fields::parse_body;
using request_fields::parse_generation;
using request_fields::parse_json;
using request_fields::token_id;
using request_fields::tool_choice_mode;
using request_fields::unsupported;
using request_fields::wrong_type;

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
  const Json* choice = f.get("tool_choice");
  if (auto mode = tool_choice_mode(choice, !tools.is_null())) return *mode;
  if (!choice->is_object()) wrong_type("tool_choice", "a string or an object", *choice);
  Fields c(*choice, "tool_choice");
  if (c.string("type") != "function") {
    fail_request("tool_choice.type", "tool_choice.type: expected \"function\"");
  }
  const Json* function = c.object("function");
  auto name = function ? Fields(*function, "tool_choice.function").string("name") : std::nullopt;
  if (!name) fail_request("tool_choice.function.name", "tool_choice.function.name: required");
  return named_tool_choice(tools, *name, "tool_choice.function.name");
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
  request.chat_template_kwargs = request_fields::template_kwargs(f);
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
