// Routing of the OpenAI-compatible service and its small endpoints (serve/openai_service.h).
#include "serve/openai_service.h"

#include "base/error.h"
#include "base/log.h"
#include "serve/anthropic_response.h"
#include "serve/route_table.h"
#include "serve/service_requests.h"
#include "serve/web_assets.h"

namespace minimax {
namespace {

// Anthropic's paths: its clients read Anthropic's error shape (unknown paths under it too).
constexpr std::string_view kAnthropicPrefix = "/v1/messages";

}  // namespace

OpenAiService::OpenAiService(const TextModel& model, Engine& engine, ServiceOptions options)
    : model_(model), engine_(engine), options_(std::move(options)), created_(unix_now()) {}

HttpReply OpenAiService::error(std::string_view path, int status, std::string_view message) {
  ApiError e{status, std::string(message), api_error_type(status), ""};
  // Anthropic clients read Anthropic's error shape, also for a refused key or method.
  if (path.starts_with(kAnthropicPrefix)) return json_reply(status, anthropic_error_json(e));
  return error_reply(e);
}

RouteAccess OpenAiService::access(std::string_view path) { return route_access(path); }

HttpReply OpenAiService::handle(std::string_view method, std::string_view path,
                                std::string_view body, const ClientAlive& client_alive) {
  try {
    const Route* route = find_route(path, method);
    if (route == nullptr) {
      if (route_access(path).methods.empty())
        return error(path, 404, fmt::format("no route {} {}", method, path));
      // The transport answers this first; kept for direct calls.
      return error(path, 405, fmt::format("method {} is not allowed on {}", method, path));
    }
    const RouteCall call{path, path.substr(route->path.size()), body, client_alive};
    HttpReply reply = (this->*route->handler)(call);
    if (reply.stats) reply.stats->model = options_.served_model_name;  // for the request log
    return reply;
  } catch (const ApiException& e) {
    return error_reply(e.error());
  } catch (const std::exception& e) {
    log_warn("{} {}: {}", method, path, e.what());
    return error_reply(internal_error(e.what()));
  }
}

void OpenAiService::check_model(std::string_view model, bool empty_ok) const {
  if ((empty_ok && model.empty()) || model == options_.served_model_name) return;
  throw ApiException(model_not_found(std::string(model)));
}

HttpReply OpenAiService::health(const RouteCall& /*call*/) {
  return HttpReply{200, "text/plain", "", {}};
}

HttpReply OpenAiService::metrics(const RouteCall& /*call*/) {
  return HttpReply{
      200, "text/plain; version=0.0.4; charset=utf-8", engine_.metrics().render_prometheus(), {}};
}

HttpReply OpenAiService::web_file(const RouteCall& call) {
  return web_file_reply(*find_web_file(call.path));
}

HttpReply OpenAiService::models(const RouteCall& /*call*/) {
  const ModelCard card{options_.served_model_name, created_, engine_.options().max_model_len};
  return json_reply(200, models_json(std::span<const ModelCard>(&card, 1)));
}

}  // namespace minimax
