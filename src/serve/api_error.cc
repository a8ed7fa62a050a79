// ApiError helpers and the OpenAI error body.
#include "serve/api_error.h"

#include <nlohmann/json.hpp>
#include <utility>

namespace minimax {

ApiException::ApiException(ApiError error) : Error(error.message), error_(std::move(error)) {}

std::string api_error_type(int status) {
  switch (status) {
    case 400:
      return "BadRequestError";
    case 401:
      return "AuthenticationError";
    case 403:
      return "PermissionDeniedError";
    case 404:
      return "NotFoundError";
    case 408:  // no client class for it; named like the others
      return "RequestTimeoutError";
    case 409:
      return "ConflictError";
    case 413:
      return "PayloadTooLargeError";
    case 422:
      return "UnprocessableEntityError";
    case 429:
      return "RateLimitError";
    case 503:
      return "ServiceUnavailableError";
    default:
      return status >= 500 ? "InternalServerError" : "BadRequestError";
  }
}

namespace {
ApiError make_error(int status, std::string message, std::string param = {}) {
  return ApiError{status, std::move(message), api_error_type(status), std::move(param)};
}
}  // namespace

ApiError bad_request(std::string message, std::string param) {
  return make_error(400, std::move(message), std::move(param));
}
ApiError unauthorized(std::string message) { return make_error(401, std::move(message)); }
ApiError model_not_found(const std::string& model) {
  return make_error(404, "The model `" + model + "` does not exist.", "model");
}
ApiError not_found(std::string message) { return make_error(404, std::move(message)); }
ApiError too_many_requests(std::string message) { return make_error(429, std::move(message)); }
ApiError service_unavailable(std::string message) { return make_error(503, std::move(message)); }
ApiError internal_error(std::string message) { return make_error(500, std::move(message)); }

void fail_request(std::string param, std::string message) {
  throw ApiException(bad_request(std::move(message), std::move(param)));
}

std::string error_body(const ApiError& error) {
  nlohmann::ordered_json inner;
  inner["message"] = error.message;
  inner["type"] = error.type.empty() ? api_error_type(error.status) : error.type;
  inner["param"] =
      error.param.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(error.param);
  inner["code"] = error.status;
  nlohmann::ordered_json body;
  body["error"] = std::move(inner);
  return body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace minimax
