// A checkpoint opened for text generation (runtime/text_model.h).
#include "runtime/text_model.h"

#include "base/error.h"

namespace minimax {

std::unique_ptr<TextModel> TextModel::load(const std::string& dir, const ModelOptions& options,
                                           const Communicator* comm) {
  BpeTokenizer tokenizer = BpeTokenizer::from_file(dir + "/tokenizer.json");
  const ModelConfig config = load_model_config(dir);
  CheckpointText text = load_checkpoint_text(dir, tokenizer, config.arch);
  ChatTemplate parsed(text.chat_template, text.chat_template_origin);  // fail before the weights
  (void)parsed;
  return std::make_unique<TextModel>(Model::load(dir, options, comm), std::move(tokenizer),
                                     std::move(text));
}

TextModel::TextModel(std::unique_ptr<Model> model, BpeTokenizer tokenizer, CheckpointText text)
    : model_(std::move(model)),
      tokenizer_(std::move(tokenizer)),
      control_guard_(tokenizer_),
      text_(std::move(text)),
      chat_template_(text_.chat_template, text_.chat_template_origin) {}

std::string TextModel::render_chat(const nlohmann::ordered_json& messages,
                                   const nlohmann::ordered_json& template_kwargs,
                                   bool add_generation_prompt) const {
  if (!messages.is_array()) fail("messages: expected a list of messages");
  if (!template_kwargs.is_object()) fail("chat template kwargs: expected an object");
  nlohmann::ordered_json context = template_kwargs;
  context["messages"] = messages;
  context["add_generation_prompt"] = add_generation_prompt;
  context["bos_token"] = text_.bos_token;
  context["eos_token"] = text_.eos_token;
  return chat_template_.render(context);
}

bool TextModel::reserved_template_variable(std::string_view name) {
  // The names render_chat sets above.
  return name == "messages" || name == "add_generation_prompt" || name == "bos_token" ||
         name == "eos_token" || ChatTemplate::is_builtin(name);
}

void TextModel::set_chat_template(const std::string& source, const std::string& origin) {
  chat_template_ = ChatTemplate(source, origin);
}

StopConditions TextModel::default_stop(int64_t max_tokens) const {
  StopConditions stop;
  stop.stop_token_ids = text_.eos_token_ids;
  stop.max_tokens = max_tokens;
  return stop;
}

}  // namespace minimax
