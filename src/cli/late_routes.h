// Routes handed to an HttpServer before the routes exist: `serve` binds its port before the
// weights are read (a taken port then fails in a second, not after a load of hundreds of GB), but
// the OpenAI routes need the loaded model. run() is called only after set(), so no request reaches
// these routes while they are empty; the empty answers are a safety net.
#pragma once

#include "serve/http_server.h"

namespace minimax::cli {

class LateRoutes : public HttpRoutes {
 public:
  void set(HttpRoutes& routes) { routes_ = &routes; }

  HttpReply handle(std::string_view method, std::string_view path, std::string_view body,
                   const ClientAlive& client_alive) override {
    if (routes_ == nullptr) return not_ready();
    return routes_->handle(method, path, body, client_alive);
  }
  HttpReply error(std::string_view path, int status, std::string_view message) override {
    if (routes_ == nullptr) return not_ready();
    return routes_->error(path, status, message);
  }
  RouteAccess access(std::string_view path) override {
    return routes_ == nullptr ? RouteAccess{} : routes_->access(path);
  }

 private:
  static HttpReply not_ready() {
    HttpReply reply;
    reply.status = 503;
    reply.body = R"({"error":{"message":"the model is loading"}})";
    return reply;
  }
  HttpRoutes* routes_ = nullptr;
};

}  // namespace minimax::cli
