// The HTTP transport of `minimax serve`: an event-driven HTTP/1.1 server on one address (an epoll
// loop reads requests, a fixed pool of workers runs the routes; see docs/api.md "Transport"),
// API-key checks where the routes ask for them, request size limits, and streamed (chunked,
// server-sent events)
// replies whose writer reports a client that went away. What each route does is the Routes object's
// business (serve/openai_service.h); this file knows sockets, not OpenAI.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "serve/cors.h"
#include "serve/request_log.h"

namespace minimax {

// Writes one piece of a streamed reply; false once the client has disconnected.
using ChunkWrite = std::function<bool(std::string_view data)>;

// Whether the client of the request being handled is still connected: false once it has closed
// or reset its connection. A handler that works before its first byte of reply (a non-streamed
// completion, a stream still queued) polls it, so that work for a client that left is cancelled.
// Cheap (one non-blocking peek at the socket), but meant for polling a few times a second.
using ClientAlive = std::function<bool()>;

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Set for a streamed reply (body unused): runs on the request's thread and writes the pieces
  // through `write`, returning when the reply is complete or the client is gone.
  std::function<void(const ChunkWrite& write)> stream;
  // Extra header lines, each ending in "\r\n" ("Cache-Control: no-cache\r\n").
  std::string headers{};  // {}: aggregate initialisations that leave it out stay warning-free
  // A generating call's model, tokens, first-token time and finish reason for the request log
  // (serve/request_log.h); a stream fills it in as it runs, before the transport writes the line.
  std::shared_ptr<RequestStats> stats{};
};

// What the transport checks for a path from the request head alone, before any body byte.
struct RouteAccess {
  // The methods the path answers, comma-separated ("GET", "POST"), or "" when the routes have no
  // opinion (unknown path: handle() answers). Other methods get 405 with this list as Allow.
  std::string methods;
  // Whether a server started with an API key asks for it on this path (OPTIONS never does).
  bool needs_key = true;
  // Cheap and safe to answer on the transport's event loop instead of a worker (health checks,
  // metrics): such a route never waits behind requests, even when every worker is busy.
  bool at_once = false;
};

class HttpRoutes {
 public:
  virtual ~HttpRoutes() = default;
  // `method` "GET" / "POST"; `path` without the query string. Must not throw for bad input:
  // errors are replies (the transport turns an escaped exception into a 500 reply anyway).
  virtual HttpReply handle(std::string_view method, std::string_view path, std::string_view body,
                           const ClientAlive& client_alive) = 0;
  // The reply for a missing or wrong API key, an unknown route and an oversized body, on `path`
  // (routes may answer in the error shape of the API the path belongs to).
  virtual HttpReply error(std::string_view path, int status, std::string_view message) = 0;
  // The methods and the key rule of `path`. The default (any method, key needed) keeps a path
  // closed unless the routes open it.
  virtual RouteAccess access(std::string_view /*path*/) { return RouteAccess{}; }
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;  // 0 = an ephemeral port (see HttpServer::port())
  // "" = no check; else the paths whose RouteAccess::needs_key need "Authorization: Bearer KEY"
  // or "x-api-key: KEY" (Anthropic's clients)
  std::string api_key;
  size_t threads = 64;  // requests handled at once (each stream holds one); not a connection limit
  size_t max_body_bytes = 32u << 20;
  int read_timeout_seconds = 60;
  CorsOptions cors;  // off unless origins are given (serve/cors.h)
};

class HttpServer {
 public:
  HttpServer(HttpRoutes& routes, HttpServerOptions options);
  ~HttpServer();
  // Binds the address; Error naming host:port when it cannot. Returns the bound port.
  int bind();
  // Serves until stop() (call bind() first); returns at once if stop() came first.
  void run();
  // Stops accepting; run() returns once the open connections are done. Safe from another thread
  // or a signal-watching thread, and idempotent: one that lands while run() is starting its
  // listener can be lost, so a watcher repeats it until run() has returned.
  void stop();
  // Shuts down every connection still open on the server's port (after stop(): the end of a
  // drain that took too long). Blocked reads and writes fail, so handlers see their client gone
  // and run() can return. Returns how many connections were dropped.
  int drop_connections();
  int port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  HttpRoutes& routes_;
  HttpServerOptions options_;
  int port_ = 0;
};

// Whether `authorization` (the header's value) carries `api_key` as a Bearer token. Compared in
// time independent of where the first difference is.
bool bearer_matches(std::string_view authorization, std::string_view api_key);
// Whether `given` (an x-api-key header's value) is `api_key`, compared the same way.
bool key_matches(std::string_view given, std::string_view api_key);

}  // namespace minimax
