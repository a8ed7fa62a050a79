// Routing of the OpenAI-compatible service and its small endpoints (serve/openai_service.h).
#include "serve/openai_service.h"

#include "base/error.h"
#include "base/log.h"
#include "serve/anthropic_response.h"
#include "serve/service_requests.h"
#include "serve/web_assets.h"

namespace minimax {
namespace {

// GET /v1/models/{id}: the id is the rest of the path, slashes included ("MiniMaxAI/MiniMax-M2").
constexpr std::string_view kModelPrefix = "/v1/models/";
constexpr std::string_view kMessagesRoute = "/v1/messages";
constexpr std::string_view kCountTokensRoute = "/v1/messages/count_tokens";

}  // namespace

OpenAiService::OpenAiService(const TextModel& model, Engine& engine, ServiceOptions options)
    : model_(model), engine_(engine), options_(std::move(options)), created_(unix_now()) {}

HttpReply OpenAiService::error(std::string_view path, int status, std::string_view message) {
  ApiError e{status, std::string(message), api_error_type(status), ""};
  // Anthropic clients read Anthropic's error shape, also for a refused key or method.
  if (path.starts_with(kMessagesRoute)) return json_reply(status, anthropic_error_json(e));
  return error_reply(e);
}

HttpReply OpenAiService::models() const {
  const ModelCard card{options_.served_model_name, created_, engine_.options().max_model_len};
  return json_reply(200, models_json(std::span<const ModelCard>(&card, 1)));
}

std::string OpenAiService::allowed_methods(std::string_view path) {
  if (path == "/health" || path == "/metrics" || path == "/v1/models" || find_web_file(path))
    return "GET";
  if (path == "/v1/chat/completions" || path == "/v1/completions" || path == "/tokenize" ||
      path == "/detokenize" || path == kMessagesRoute || path == kCountTokensRoute)
    return "POST";
  if (path.substr(0, kModelPrefix.size()) == kModelPrefix && path.size() > kModelPrefix.size())
    return "GET";
  return "";
}

bool OpenAiService::answers_at_once(std::string_view method, std::string_view path) {
  return method == "GET" && (path == "/health" || path == "/metrics");
}

HttpReply OpenAiService::handle(std::string_view method, std::string_view path,
                                std::string_view body, const ClientAlive& client_alive) {
  const bool get = method == "GET", post = method == "POST";
  try {
    if (path == "/health" && get) return HttpReply{200, "text/plain", "", {}};
    if (path == "/metrics" && get)
      return HttpReply{200,
                       "text/plain; version=0.0.4; charset=utf-8",
                       engine_.metrics().render_prometheus(),
                       {}};
    if (path == "/v1/models" && get) return models();
    if (get)  // the chat page (outside /v1/, so the transport asks no API key for it)
      if (const EmbeddedFile* file = find_web_file(path)) return web_file_reply(*file);
    if (path == "/v1/chat/completions" && post) return chat_completions(body, client_alive);
    if (path == "/v1/completions" && post) return completions(body, client_alive);
    if (path == "/tokenize" && post) return tokenize(body);
    if (path == "/detokenize" && post) return detokenize(body);
    if (path == kMessagesRoute && post) return messages(body, client_alive);
    if (path == kCountTokensRoute && post) return count_message_tokens(body);
    if (get && path.substr(0, kModelPrefix.size()) == kModelPrefix &&
        path.size() > kModelPrefix.size())
      return model(path.substr(kModelPrefix.size()));
    if (!allowed_methods(path).empty())  // the transport answers this first; kept for direct calls
      return error(path, 405, fmt::format("method {} is not allowed on {}", method, path));
    return error(path, 404, fmt::format("no route {} {}", method, path));
  } catch (const ApiException& e) {
    return error_reply(e.error());
  } catch (const std::exception& e) {
    log_warn("{} {}: {}", method, path, e.what());
    return error_reply(internal_error(e.what()));
  }
}

}  // namespace minimax
