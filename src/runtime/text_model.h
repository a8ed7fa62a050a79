// A checkpoint directory opened for text generation: the model, its tokenizer, its text settings
// (runtime/checkpoint_text.h) and its chat template, with the helpers `generate`, `chat` and the
// server share: rendering a conversation and the default stop conditions.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "model/model.h"
#include "runtime/checkpoint_text.h"
#include "runtime/generator.h"
#include "text/bpe_tokenizer.h"
#include "text/control_text.h"
#include "text/jinja/chat_template.h"

namespace minimax {

class TextModel {
 public:
  // Loads DIR/tokenizer.json, the text settings and the weights (in that order, so that a broken
  // tokenizer or template is reported before a long weight load).
  static std::unique_ptr<TextModel> load(const std::string& dir, const ModelOptions& options,
                                         const Communicator* comm = nullptr);

  TextModel(std::unique_ptr<Model> model, BpeTokenizer tokenizer, CheckpointText text);

  Model& model() { return *model_; }
  const Model& model() const { return *model_; }
  const BpeTokenizer& tokenizer() const { return tokenizer_; }
  const CheckpointText& text() const { return text_; }
  const ChatTemplate& chat_template() const { return chat_template_; }
  // Replaces the checkpoint's chat template (serve --chat-template); Error naming `origin` when
  // the source does not parse. The checkpoint's own stays recorded in text().
  void set_chat_template(const std::string& source, const std::string& origin);

  // The chat template applied to `messages` (OpenAI-shaped: role, content, reasoning_content,
  // tool_calls...), with bos_token / eos_token and `template_kwargs` (e.g. thinking_mode for M3)
  // as further variables.
  std::string render_chat(
      const nlohmann::ordered_json& messages,
      const nlohmann::ordered_json& template_kwargs = nlohmann::ordered_json::object(),
      bool add_generation_prompt = true) const;
  // Whether render_chat sets the template variable `name` itself (messages,
  // add_generation_prompt, bos_token, eos_token) or the template language defines it
  // (ChatTemplate::is_builtin): a template kwarg by that name would be overwritten, or would hide
  // the builtin.
  static bool reserved_template_variable(std::string_view name);
  // Text → ids; special tokens written in the text become their ids (as HF tokenizers do).
  std::vector<int32_t> encode(std::string_view text) const { return tokenizer_.encode(text); }
  // What keeps message text from becoming control tokens: protect the messages before
  // render_chat, encode the rendered text with it (text/control_text.h).
  const ControlTextGuard& control_guard() const { return control_guard_; }

  // The checkpoint's EOS ids and `max_tokens`.
  StopConditions default_stop(int64_t max_tokens) const;

 private:
  std::unique_ptr<Model> model_;
  BpeTokenizer tokenizer_;
  ControlTextGuard control_guard_;
  CheckpointText text_;
  ChatTemplate chat_template_;
};

}  // namespace minimax
