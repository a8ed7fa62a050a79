// Errors of the OpenAI-compatible API: an HTTP status plus the OpenAI error object
// {"error": {"message", "type", "param", "code"}} (spec/parsers.md §5), and the exception that
// carries one out of the request parsers to the HTTP server.
//
// Convention (vLLM's, documented in docs/api.md): `type` is the name of the exception class the
// official clients raise for the status ("BadRequestError", "AuthenticationError",
// "NotFoundError", "RateLimitError", "InternalServerError", "ServiceUnavailableError") and `code`
// is the HTTP status as an integer; `param` names the offending field ("messages[2].role") or is
// null.
#pragma once

#include <string>

#include "base/error.h"

namespace minimax {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type;   // derived from `status` by the helpers below
  std::string param;  // "" → null
};

// Thrown by the request parsers; an Error (so generic handlers still see a message) that keeps
// the status and the field at fault.
class ApiException : public Error {
 public:
  explicit ApiException(ApiError error);
  const ApiError& error() const { return error_; }

 private:
  ApiError error_;
};

// The class-like type name for an HTTP status ("BadRequestError" for 400, ...).
std::string api_error_type(int status);

ApiError bad_request(std::string message, std::string param = {});  // 400
ApiError unauthorized(std::string message);                         // 401
ApiError model_not_found(const std::string& model);                 // 404, param "model"
ApiError not_found(std::string message);                            // 404 (unknown route)
ApiError too_many_requests(std::string message);                    // 429 (queue full)
ApiError service_unavailable(std::string message);                  // 503
ApiError internal_error(std::string message);                       // 500

// Throws ApiException(bad_request(message, param)).
[[noreturn]] void fail_request(std::string param, std::string message);

// {"error":{"message":…,"type":…,"param":…|null,"code":status}} as compact JSON text.
std::string error_body(const ApiError& error);

}  // namespace minimax
