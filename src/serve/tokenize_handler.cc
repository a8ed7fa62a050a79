// vLLM's /tokenize and /detokenize, and GET /v1/models/{id} (serve/openai_service.h).
#include <string>
#include <vector>

#include "serve/chat_prompt.h"
#include "serve/openai_service.h"
#include "serve/request_fields.h"
#include "serve/service_requests.h"

namespace minimax {

using request_fields::Fields;
using request_fields::Json;

HttpReply OpenAiService::tokenize(const RouteCall& call) {
  const Json request = request_fields::parse_body(call.body);
  const Fields f(request, "");
  check_model(f.string("model").value_or(""));
  const bool has_prompt = f.get("prompt") != nullptr, has_messages = f.get("messages") != nullptr;
  if (has_prompt == has_messages)
    fail_request(has_prompt ? "messages" : "prompt",
                 "exactly one of prompt and messages is required");
  // The MiniMax tokenizers add no BOS/EOS (no post-processor), so add_special_tokens changes
  // nothing; it is read so that a wrong type is still a 400, as in vLLM.
  f.boolean("add_special_tokens");
  const bool token_strs = f.boolean("return_token_strs").value_or(false);
  std::vector<int32_t> tokens;
  if (has_prompt) {
    const std::optional<std::string> prompt = f.string("prompt");
    tokens = model_.encode(*prompt);
  } else {
    // The chat request's own parser checks messages, tools and template fields; what it reads
    // beyond them (sampling fields) has no effect here.
    const ChatRequest chat = parse_chat_request(call.body);
    tokens = model_.control_guard().encode(render_prompt(model_, chat, options_.parser_format));
  }
  Json out;
  out["count"] = tokens.size();
  out["max_model_len"] = engine_.options().max_model_len;
  out["tokens"] = tokens;
  out["token_strs"] = nullptr;
  if (token_strs) {
    Json strs = Json::array();
    for (const int32_t id : tokens) strs.push_back(std::string(model_.tokenizer().token_text(id)));
    out["token_strs"] = std::move(strs);
  }
  return json_reply(200, out);
}

HttpReply OpenAiService::detokenize(const RouteCall& call) {
  const Json request = request_fields::parse_body(call.body);
  const Fields f(request, "");
  check_model(f.string("model").value_or(""));
  const Json* tokens = f.array("tokens");
  if (tokens == nullptr) fail_request("tokens", "tokens: required");
  std::vector<int32_t> ids;
  const int32_t vocab = model_.tokenizer().vocab_size();
  for (size_t i = 0; i < tokens->size(); ++i) {
    const std::string path = fmt::format("tokens[{}]", i);
    const int32_t id = request_fields::token_id((*tokens)[i], path);
    if (id >= vocab)
      fail_request(path,
                   fmt::format("{}: {} is outside the vocabulary (0..{})", path, id, vocab - 1));
    ids.push_back(id);
  }
  Json out;
  out["prompt"] = model_.tokenizer().decode(ids);
  return json_reply(200, out);
}

HttpReply OpenAiService::model(const RouteCall& call) {
  check_model(call.rest, /*empty_ok=*/false);  // the id: the rest of the path
  const ModelCard card{options_.served_model_name, created_, engine_.options().max_model_len};
  return json_reply(200, models_json(std::span<const ModelCard>(&card, 1))["data"][0]);
}

}  // namespace minimax
