// The operator's request log of `minimax serve`: one line per request, written when its reply is
// complete (streamed or whole, errors and refusals included), with what the transport saw
// (client, method, path, status, duration) and what the serving loop adds for a generating
// request (model, prompt and completion tokens, time to first token, finish reason). The routes
// that monitors poll (/health, /metrics: those answered on the event loop) log at debug level
// only, so that a load balancer's checks do not bury the requests.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/log.h"

namespace minimax {

// What a generating call adds to its request's line, filled by the serving loop as the call runs
// (on the worker that runs the call, which also writes the line afterwards).
struct RequestStats {
  std::string model;
  int64_t prompt_tokens = -1, completion_tokens = -1;  // -1: not known
  std::optional<std::chrono::steady_clock::time_point> first_token;
  // The engine's ("stop", "length", "timeout", "abort", "error"), "client_closed" for a client
  // that left, several comma-separated when the choices of an n > 1 request ended differently.
  std::string finish_reason;
  bool stream = false;
};

struct RequestRecord {
  std::string_view client;  // "127.0.0.1:51234"
  std::string_view method, path;
  int status = 0;
  std::chrono::steady_clock::time_point start, end;
  const RequestStats* stats = nullptr;  // null for a request that generated nothing
  bool quiet = false;                   // a monitor's route: debug level
};

// The line's fields in the given format (the log line without its newline).
std::string request_log_line(LogFormat format, LogTime time, const RequestRecord& record);
// Writes the line (info, or debug when `quiet`).
void log_request(const RequestRecord& record);

}  // namespace minimax
