// The OpenAI-compatible endpoints over one engine: /v1/chat/completions, /v1/completions,
// /v1/models (and /v1/models/{id}), vLLM's /tokenize and /detokenize, /health and /metrics;
// Anthropic's /v1/messages and /v1/messages/count_tokens (serve/anthropic_request.h); OpenAI's
// Responses API at /v1/responses (serve/responses_request.h); and the chat
// page at / (serve/web_assets.h). A request is parsed (serve/openai_request.h), rendered with the
// chat template, tokenized, submitted to the engine as n requests, and its tokens are turned into
// reasoning / content / tool-call deltas by one ParsePipeline per choice — streamed as server-sent
// events or returned whole; both paths run the same pipeline, so they agree.
#pragma once

#include <string>
#include <string_view>

#include "runtime/engine.h"
#include "runtime/text_model.h"
#include "serve/http_server.h"
#include "serve/parser_format.h"
#include "serve/response_store.h"
#include "serve/route_table.h"

namespace minimax {

struct ServiceOptions {
  std::string served_model_name;
  ParserFormat parser_format = ParserFormat::kMinimaxM2;
  bool parse_reasoning = true;           // --reasoning-parser none turns it off
  bool append_think = false;             // --reasoning-parser minimax_m2_append_think
  bool parse_tool_calls = true;          // --tool-call-parser none turns it off
  double request_timeout_seconds = 600;  // 0 = none
};

class OpenAiService : public HttpRoutes {
 public:
  // `model` and `engine` must outlive the service (the engine runs `model`'s Model).
  OpenAiService(const TextModel& model, Engine& engine, ServiceOptions options);

  HttpReply handle(std::string_view method, std::string_view path, std::string_view body,
                   const ClientAlive& client_alive) override;
  HttpReply error(std::string_view path, int status, std::string_view message) override;
  RouteAccess access(std::string_view path) override;  // serve/route_table.h

  const ServiceOptions& options() const { return options_; }

  // The routes' handlers, one per row of the route table (serve/route_table.cc). The generating
  // ones poll `call.client_alive` while the request waits for the engine: a client that left has
  // its choices cancelled (the engine frees their KV blocks) instead of generated to the end.
  HttpReply health(const RouteCall& call);
  HttpReply metrics(const RouteCall& call);   // Prometheus text
  HttpReply web_file(const RouteCall& call);  // the chat page (serve/web_assets.h)
  HttpReply models(const RouteCall& call);
  HttpReply model(const RouteCall& call);  // GET /v1/models/{id}
  HttpReply chat_completions(const RouteCall& call);
  HttpReply completions(const RouteCall& call);
  // Anthropic's Messages API (messages_handler.cc); its errors are in Anthropic's shape.
  HttpReply messages(const RouteCall& call);
  HttpReply count_message_tokens(const RouteCall& call);
  // OpenAI's Responses API (responses_handler.cc); previous_response_id reads `responses_`.
  HttpReply responses(const RouteCall& call);
  // GET /v1/responses/{id}: the stored response object; DELETE forgets it. 404 for an id that
  // is unknown, was made with store: false, or was evicted.
  HttpReply retrieve_response(const RouteCall& call);
  HttpReply delete_response(const RouteCall& call);
  // vLLM's /tokenize (`prompt` or `messages`) and /detokenize (`tokens`).
  HttpReply tokenize(const RouteCall& call);
  HttpReply detokenize(const RouteCall& call);

 private:
  // Throws ApiException 404 (model_not_found) unless `model` is the served model's name, or ""
  // when `empty_ok` (OpenAI's routes take a request without one; Anthropic's require it).
  void check_model(std::string_view model, bool empty_ok = true) const;

  const TextModel& model_;
  Engine& engine_;
  ServiceOptions options_;
  int64_t created_ = 0;      // the model card's "created": when the service started
  ResponseStore responses_;  // stored responses and their conversations (bounded, oldest evicted)
};

}  // namespace minimax
