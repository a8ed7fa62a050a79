// A chat template (the Jinja `chat_template` of a tokenizer_config.json, or a built-in one) parsed
// once and rendered per request exactly as Hugging Face transformers' apply_chat_template renders
// it: jinja2 with trim_blocks and lstrip_blocks, Python's str()/repr() of values, and tojson as
// json.dumps(ensure_ascii=False). The supported Jinja subset is listed in docs/chat_template.md.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace minimax {

namespace jinja {
struct Stmt;
}

class ChatTemplate {
 public:
  // Parses `source`; throws Error naming `name` and the line:column of a syntax error, an unknown
  // tag, filter or test.
  ChatTemplate(std::string source, std::string name);

  // Renders with `context` as the template's variables: {"messages": [...], "tools": [...],
  // "add_generation_prompt": bool, chat_template_kwargs such as "thinking_mode", "bos_token", ...}.
  // Like transformers, "tools" and "documents" default to null and "add_generation_prompt" to
  // false when absent. Throws Error with the line:column of the failing construct (including the
  // message of a raise_exception call). Thread-safe: the parsed template is never modified.
  std::string render(const nlohmann::ordered_json& context) const;

  // Whether the template language gives `name` a value of its own (raise_exception, namespace,
  // range, dict, strftime_now): a context variable by that name would hide it.
  static bool is_builtin(std::string_view name);

  const std::string& name() const { return name_; }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::string name_;
  std::shared_ptr<const std::vector<std::unique_ptr<jinja::Stmt>>> body_;
};

}  // namespace minimax
