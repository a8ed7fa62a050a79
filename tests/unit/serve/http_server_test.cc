// The HTTP transport on loopback with stub routes: API-key checks where the routes ask for them
// (OPTIONS never, a path the routes say nothing about always), RFC 9112 refusals, errors for
// unknown routes and oversized bodies come from the routes' error(), streamed replies arrive in
// pieces, a streamed reply notices a client that went away, and a thousand slow clients do not
// keep a new request from being answered.
#include "serve/http_server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace minimax {
namespace {

class StubRoutes : public HttpRoutes {
 public:
  HttpReply handle(std::string_view method, std::string_view path, std::string_view body,
                   const ClientAlive& client_alive) override {
    if (path == "/stream") {
      HttpReply reply;
      reply.content_type = "text/event-stream";
      reply.stream = [this](const ChunkWrite& write) {
        for (int i = 0; i < 200000; ++i) {
          if (!write("data: " + std::to_string(i) + "\n\n")) {
            saw_disconnect = true;
            return;
          }
          if (i < 3) continue;
          if (stop_after_three) return;
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      };
      return reply;
    }
    if (path == "/alive")
      return HttpReply{200, "text/plain", client_alive() ? "alive" : "gone", {}};
    if (path == "/wait") {  // a non-streamed reply that takes long: waits for the client to leave
      for (int i = 0; i < 1000 && !saw_gone; ++i) {
        saw_gone = !client_alive();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      return HttpReply{200, "text/plain", "done", {}};
    }
    return HttpReply{
        200,
        "text/plain",
        std::string(method) + " " + std::string(path) + " " + std::to_string(body.size()),
        {}};
  }
  // The stub's own key rule: /v1/ paths need it, the tests' other paths (/x, /stream...) do not.
  RouteAccess access(std::string_view path) override {
    return RouteAccess{path == "/only-post" ? "POST" : "", path.starts_with("/v1/")};
  }
  HttpReply error(std::string_view path, int status, std::string_view message) override {
    std::lock_guard lock(mutex);
    last_error_path_ = path;
    return HttpReply{status, "application/json", "error: " + std::string(message), {}};
  }
  std::string last_error_path() {
    std::lock_guard lock(mutex);
    return last_error_path_;
  }
  std::mutex mutex;
  std::string last_error_path_;  // of the last error reply (the event loop writes it)
  std::atomic<bool> saw_disconnect{false};
  std::atomic<bool> saw_gone{false};
  bool stop_after_three = true;
};

struct Running {
  explicit Running(StubRoutes& routes, HttpServerOptions options) : server(routes, options) {
    options.port = 0;
    port = server.bind();
    thread = std::thread([this] {
      server.run();
      returned = true;
    });
    httplib::Client probe("127.0.0.1", port);
    for (int i = 0; i < 200 && !probe.Get("/health"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~Running() {
    server.stop();
    thread.join();
  }
  HttpServer server;
  int port = 0;
  std::atomic<bool> returned{false};  // run() returned
  std::thread thread;
};

HttpServerOptions options_with_key() {
  HttpServerOptions o;
  o.port = 0;
  o.api_key = "secret";
  o.threads = 4;
  o.max_body_bytes = 1000;
  return o;
}

TEST(BearerMatches, ExactTokenOnly) {
  EXPECT_TRUE(bearer_matches("Bearer secret", "secret"));
  EXPECT_FALSE(bearer_matches("Bearer secre", "secret"));
  EXPECT_FALSE(bearer_matches("Bearer secrets", "secret"));
  EXPECT_FALSE(bearer_matches("bearer secret", "secret"));
  EXPECT_FALSE(bearer_matches("", "secret"));
  EXPECT_TRUE(key_matches("secret", "secret"));
  EXPECT_FALSE(key_matches("Bearer secret", "secret"));
  EXPECT_FALSE(key_matches("secret ", "secret"));
  EXPECT_FALSE(key_matches("", "secret"));
}

// Routes that keep HttpRoutes' default access: no method list, the key needed everywhere.
class DefaultAccessRoutes : public StubRoutes {
 public:
  RouteAccess access(std::string_view path) override { return HttpRoutes::access(path); }
};

TEST(HttpServer, KeyIsCheckedWhereTheRoutesAskForIt) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  httplib::Client client("127.0.0.1", running.port);
  auto open = client.Get("/health");
  ASSERT_TRUE(open);
  EXPECT_EQ(open->status, 200);
  auto refused = client.Get("/v1/models");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_NE(refused->body.find("API key"), std::string::npos);
  auto allowed = client.Get("/v1/models", {{"Authorization", "Bearer secret"}});
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200);
  EXPECT_EQ(allowed->body, "GET /v1/models 0");
  // Anthropic's clients send the key as x-api-key (any case); the routes see the path of a
  // refusal, to answer it in their API's error shape.
  auto anthropic = client.Get("/v1/models", {{"X-Api-Key", "secret"}});
  ASSERT_TRUE(anthropic);
  EXPECT_EQ(anthropic->status, 200);
  auto wrong = client.Get("/v1/messages", {{"x-api-key", "secrets"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  EXPECT_EQ(routes.last_error_path(), "/v1/messages");
}

TEST(HttpServer, OversizedBodyIsA413FromTheRoutes) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  httplib::Client client("127.0.0.1", running.port);
  auto small = client.Post("/x", std::string(10, 'a'), "application/json");
  ASSERT_TRUE(small);
  EXPECT_EQ(small->body, "POST /x 10");
  auto big = client.Post("/x", std::string(5000, 'a'), "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_NE(big->body.find("error: request body over 1000 bytes"), std::string::npos);
}

TEST(HttpServer, StreamedReplyArrivesWhole) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  httplib::Client client("127.0.0.1", running.port);
  auto reply = client.Get("/stream");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(reply->body, "data: 0\n\ndata: 1\n\ndata: 2\n\ndata: 3\n\n");
  EXPECT_EQ(reply->get_header_value("Content-Type"), "text/event-stream");
}

TEST(HttpServer, StreamNoticesAClientThatLeft) {
  std::signal(SIGPIPE, SIG_IGN);  // as `minimax serve` does
  StubRoutes routes;
  routes.stop_after_three = false;
  Running running(routes, options_with_key());
  {
    httplib::Client client("127.0.0.1", running.port);
    int received = 0;
    client.Get("/stream", [&](const char*, size_t) { return ++received < 3; });  // hang up
  }
  for (int i = 0; i < 500 && !routes.saw_disconnect; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(routes.saw_disconnect);
}

TEST(HttpServer, ClientAliveWhileTheClientWaits) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  httplib::Client client("127.0.0.1", running.port);
  for (int i = 0; i < 3; ++i) {  // also on a kept-alive connection's later requests
    auto reply = client.Get("/alive");
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->body, "alive");
  }
}

// A client that sends a request and closes its socket before the (non-streamed) reply: the
// handler's ClientAlive turns false, which is what lets a completion be cancelled.
TEST(HttpServer, ClientAliveTurnsFalseWhenTheClientCloses) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(running.port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const std::string request = "POST /wait HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n";
  ASSERT_EQ(write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(routes.saw_gone);  // connected: the handler is still waiting
  close(fd);
  for (int i = 0; i < 300 && !routes.saw_gone; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(routes.saw_gone);
}

// Sends `request` on a new connection and returns everything the server sends until it closes
// the connection (or 5 s pass); `closed` tells whether it closed.
std::string raw_exchange(int port, const std::string& request, bool* closed = nullptr) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) return "";
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  (void)!write(fd, request.data(), request.size());
  std::string reply;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) reply.append(buffer, static_cast<size_t>(n));
  if (closed != nullptr) *closed = n == 0;
  close(fd);
  return reply;
}

std::string status_line(const std::string& reply) { return reply.substr(0, reply.find("\r\n")); }

TEST(HttpServer, APathTheRoutesSayNothingAboutNeedsTheKey) {
  DefaultAccessRoutes routes;
  Running running(routes, options_with_key());
  httplib::Client client("127.0.0.1", running.port);
  auto refused = client.Post("/anything", "{}", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  auto allowed =
      client.Post("/anything", {{"Authorization", "Bearer secret"}}, "{}", "application/json");
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200);
}

// A browser's CORS preflight carries no key: OPTIONS reaches the routes (or gets the 405 of a
// route that does not answer it) without one.
TEST(HttpServer, OptionsNeverNeedsTheKey) {
  DefaultAccessRoutes routes;
  Running running(routes, options_with_key());
  const std::string reply = raw_exchange(
      running.port, "OPTIONS /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(status_line(reply), "HTTP/1.1 200 OK");
  EXPECT_NE(reply.find("OPTIONS /v1/models 0"), std::string::npos) << reply;
  StubRoutes stub;
  Running other(stub, options_with_key());
  const std::string refused = raw_exchange(
      other.port, "OPTIONS /only-post HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(status_line(refused), "HTTP/1.1 405 Method Not Allowed");
}

// Two credentials are not "the first one wins": a proxy in front may have checked the other.
TEST(HttpServer, AKeyHeaderSentTwiceIs400) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  for (std::string headers : {"Authorization: Bearer secret\r\nAuthorization: Bearer secret\r\n",
                              "Authorization: Bearer wrong\r\nAuthorization: Bearer secret\r\n",
                              "x-api-key: secret\r\nX-Api-Key: wrong\r\n"}) {
    SCOPED_TRACE(headers);
    bool closed = false;
    const std::string reply = raw_exchange(
        running.port, "GET /v1/models HTTP/1.1\r\nHost: x\r\n" + headers + "\r\n", &closed);
    EXPECT_EQ(status_line(reply), "HTTP/1.1 400 Bad Request");
    EXPECT_NE(reply.find("error: the "), std::string::npos) << reply;
    EXPECT_TRUE(closed);
  }
}

// RFC 9112 at the socket: absolute-form targets route by their path, a head without Host or with
// a bare CR is refused and the connection closed (what follows it cannot be trusted).
TEST(HttpServer, HeadsFollowRfc9112) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  const std::string absolute = raw_exchange(
      running.port, fmt::format("GET http://127.0.0.1:{}/v1/models HTTP/1.1\r\nHost: x\r\n"
                                "Authorization: Bearer secret\r\nConnection: close\r\n\r\n",
                                running.port));
  EXPECT_EQ(status_line(absolute), "HTTP/1.1 200 OK");
  EXPECT_NE(absolute.find("GET /v1/models 0"), std::string::npos) << absolute;
  const std::string unkeyed = raw_exchange(
      running.port, "GET http://h/v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(status_line(unkeyed), "HTTP/1.1 401 Unauthorized");  // the key rule sees the path
  for (std::string request :
       {std::string("GET /x HTTP/1.1\r\n\r\n"),
        std::string("POST /x HTTP/1.1\r\nHost: x\r\nX-A: a\rContent-Length: 99\r\n"
                    "Content-Length: 2\r\n\r\n{}"),
        std::string("GET /x HTTP/1.1\r\nHost: x\r\nX-A: a\x01\r\n\r\n")}) {
    SCOPED_TRACE(request);
    bool closed = false;
    const std::string reply = raw_exchange(running.port, request, &closed);
    EXPECT_EQ(status_line(reply), "HTTP/1.1 400 Bad Request");
    EXPECT_TRUE(closed);
  }
}

TEST(HttpServer, SecondServerOnAPortInUseFailsNamingIt) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  HttpServerOptions options = options_with_key();
  options.port = running.port;
  HttpServer second(routes, options);
  try {
    second.bind();
    ADD_FAILURE() << "bound a port in use";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("127.0.0.1:" + std::to_string(running.port)), std::string::npos) << what;
    EXPECT_NE(what.find("in use"), std::string::npos) << what;
  }
}

// A raw NUL in a header value is a control byte (400, RFC 9110 §5.5); %00 is not decoded in a
// header, so it is just a wrong key.
TEST(HttpServer, NulInTheBearerTokenIsRefused) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  const struct {
    std::string token, status, message;
  } cases[] = {{std::string("secret\0", 7) + "x", "400 Bad Request", "control character"},
               {std::string("secret\0", 7), "400 Bad Request", "control character"},
               {"secret%00", "401 Unauthorized", "Invalid or missing API key"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.token);
    const std::string reply =
        raw_exchange(running.port,
                     "GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     "Authorization: Bearer " +
                         c.token + "\r\n\r\n");
    EXPECT_EQ(status_line(reply), "HTTP/1.1 " + c.status);
    EXPECT_NE(reply.find("error: " + c.message), std::string::npos) << reply;
  }
}

// Refused before the body is read: the reply comes at once (no body is ever sent here) and the
// connection is closed, as its unread body must not be parsed as the next request.
TEST(HttpServer, BadContentLengthsAreRefusedAtOnce) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  const struct {
    std::string length;
    std::string status;
  } cases[] = {{"-1", "400 Bad Request"},
               {"+5", "400 Bad Request"},
               {"1e3", "400 Bad Request"},
               {"", "400 Bad Request"},
               {"5000", "413 Payload Too Large"},
               {"18446744073709551616", "413 Payload Too Large"},
               {"99999999999999999999999", "413 Payload Too Large"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.length);
    bool closed = false;
    const auto start = std::chrono::steady_clock::now();
    const std::string reply = raw_exchange(
        running.port, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: " + c.length + "\r\n\r\n",
        &closed);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    EXPECT_EQ(status_line(reply), "HTTP/1.1 " + c.status);
    EXPECT_NE(reply.find("\r\n\r\nerror: "), std::string::npos) << reply;
    EXPECT_TRUE(closed);
  }
  bool closed = false;
  const std::string twice = raw_exchange(
      running.port,
      "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", &closed);
  EXPECT_EQ(status_line(twice), "HTTP/1.1 400 Bad Request");
  const std::string none =
      raw_exchange(running.port, "POST /x HTTP/1.1\r\nHost: x\r\n\r\n", &closed);
  EXPECT_EQ(status_line(none), "HTTP/1.1 411 Length Required");
  EXPECT_TRUE(closed);
}

TEST(HttpServer, OtherMethodsOnAKnownRouteAre405WithAllow) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  for (std::string method : {"PUT", "DELETE", "PATCH", "GET"}) {
    SCOPED_TRACE(method);
    const std::string reply =
        raw_exchange(running.port, method +
                                       " /only-post HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                                       "Content-Length: 2\r\n\r\n{}");
    EXPECT_EQ(status_line(reply), "HTTP/1.1 405 Method Not Allowed");
    EXPECT_NE(reply.find("\r\nAllow: POST\r\n"), std::string::npos) << reply;
    EXPECT_NE(reply.find("error: method " + method + " is not allowed on /only-post"),
              std::string::npos);
  }
  const std::string ok = raw_exchange(running.port,
                                      "POST /only-post HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                                      "Content-Length: 2\r\n\r\n{}");
  EXPECT_EQ(status_line(ok), "HTTP/1.1 200 OK");
}

std::string chunked(size_t bytes, size_t piece) {
  std::string body;
  for (size_t sent = 0; sent < bytes; sent += piece) {
    const size_t n = std::min(piece, bytes - sent);
    body += fmt::format("{:x}\r\n{}\r\n", n, std::string(n, 'a'));
  }
  return body + "0\r\n\r\n";
}

TEST(HttpServer, ChunkedBodiesAreReadUpToTheLimit) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  const std::string head =
      "POST /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string small = raw_exchange(running.port, head + chunked(1000, 300));
  EXPECT_EQ(status_line(small), "HTTP/1.1 200 OK");
  EXPECT_NE(small.find("POST /x 1000"), std::string::npos) << small;
  bool closed = false;
  const std::string big = raw_exchange(running.port, head + chunked(5000, 300), &closed);
  EXPECT_EQ(status_line(big), "HTTP/1.1 413 Payload Too Large");
  EXPECT_NE(big.find("error: request body over 1000 bytes"), std::string::npos) << big;
  EXPECT_TRUE(closed);
  const std::string gzip = raw_exchange(
      running.port, "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", &closed);
  EXPECT_EQ(status_line(gzip), "HTTP/1.1 400 Bad Request");
}

// The key is checked before the body is read: a chunked upload with no key gets 401 at once,
// though not one byte of its body was sent.
TEST(HttpServer, MissingKeyIsRefusedBeforeTheBody) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  for (std::string framing : {"Transfer-Encoding: chunked", "Content-Length: 900"}) {
    SCOPED_TRACE(framing);
    bool closed = false;
    const std::string reply = raw_exchange(
        running.port, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + framing + "\r\n\r\n",
        &closed);
    EXPECT_EQ(status_line(reply), "HTTP/1.1 401 Unauthorized");
    EXPECT_TRUE(closed);
  }
}

// What bounds a drain: a client that sent half a request holds its connection (and run()) open
// after stop(), until drop_connections() shuts it down.
TEST(HttpServer, DropConnectionsEndsADrainHeldByASlowClient) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(running.port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  const std::string half = "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{";
  ASSERT_EQ(write(fd, half.data(), half.size()), static_cast<ssize_t>(half.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  running.server.stop();
  running.server.stop();  // idempotent
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(running.returned);  // still draining: the handler waits for the body
  EXPECT_EQ(running.server.drop_connections(), 1);
  for (int i = 0; i < 300 && !running.returned; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(running.returned);
  close(fd);
}

TEST(HttpServer, StopBeforeRunMakesRunReturn) {
  StubRoutes routes;
  HttpServer server(routes, options_with_key());
  server.bind();
  server.stop();
  server.run();  // returns at once (the test would hang otherwise)
}

int connect_to(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Reads from `fd` until `want` appears in what arrived (or 5 s pass); returns what arrived.
std::string read_until(int fd, const std::string& want) {
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::string got;
  char buffer[4096];
  ssize_t n = 0;
  while (got.find(want) == std::string::npos && (n = read(fd, buffer, sizeof(buffer))) > 0)
    got.append(buffer, static_cast<size_t>(n));
  return got;
}

TEST(HttpServer, HeadOverTheLimitIs431) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  bool closed = false;
  const std::string reply = raw_exchange(
      running.port,
      "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(100 << 10, 'a') + "\r\n\r\n",
      &closed);
  EXPECT_EQ(status_line(reply), "HTTP/1.1 431 Request Header Fields Too Large");
  EXPECT_NE(reply.find("error: request head over"), std::string::npos) << reply.substr(0, 300);
  EXPECT_TRUE(closed);
}

// "Expect: 100-continue" asks the server whether to send the body: it must hear the refusal
// (here the 401 of a missing key), not a 100 that invites the upload first.
TEST(HttpServer, ExpectContinueIsAnsweredOnlyAfterTheKeyIsChecked) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  const std::string head =
      "POST /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n";
  bool closed = false;
  const std::string refused = raw_exchange(running.port, head + "\r\n", &closed);
  EXPECT_EQ(status_line(refused), "HTTP/1.1 401 Unauthorized");
  EXPECT_EQ(refused.find("100 Continue"), std::string::npos) << refused;
  EXPECT_TRUE(closed);

  const int fd = connect_to(running.port);
  ASSERT_GE(fd, 0);
  const std::string with_key = head + "Authorization: Bearer secret\r\n\r\n";
  ASSERT_EQ(write(fd, with_key.data(), with_key.size()), static_cast<ssize_t>(with_key.size()));
  const std::string go = read_until(fd, "\r\n\r\n");
  EXPECT_EQ(go, "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_EQ(write(fd, "abcd", 4), 4);
  const std::string reply = read_until(fd, "POST /v1/x 4");
  EXPECT_EQ(status_line(reply), "HTTP/1.1 200 OK");
  EXPECT_NE(reply.find("POST /v1/x 4"), std::string::npos) << reply;
  close(fd);
}

TEST(HttpServer, PipelinedRequestsOnOneConnectionAreAnsweredInOrder) {
  StubRoutes routes;
  Running running(routes, options_with_key());
  const std::string reply = raw_exchange(
      running.port,
      "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nHost: x\r\n"
      "Connection: close\r\n\r\n");
  const size_t first = reply.find("POST /a 3");
  const size_t second = reply.find("GET /b 0");
  ASSERT_NE(first, std::string::npos) << reply;
  ASSERT_NE(second, std::string::npos) << reply;
  EXPECT_LT(first, second);
}

// The point of the event-driven transport: with far more slow clients than worker threads (each
// holds a connection with half a head, half a body, or nothing sent), a new request is answered.
TEST(HttpServer, AThousandSlowClientsDoNotKeepNewRequestsWaiting) {
  constexpr int kSlow = 1000;
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_cur < 2 * kSlow + 100 && limit.rlim_max >= 2 * kSlow + 100) {
    limit.rlim_cur = 2 * kSlow + 100;  // both ends of every connection live in this process
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
  }
  if (limit.rlim_cur < 2 * kSlow + 100)
    GTEST_SKIP() << "ulimit -n is " << limit.rlim_cur << "; the test needs " << 2 * kSlow + 100;
  StubRoutes routes;
  HttpServerOptions options = options_with_key();
  options.threads = 2;
  Running running(routes, options);
  std::vector<int> slow;
  const std::string partial[] = {
      "", "POST /x HTTP/1.1\r\nHost: x\r\nContent-Le",
      "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"a",
      "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"};
  for (int i = 0; i < kSlow; ++i) {
    const int fd = connect_to(running.port);
    ASSERT_GE(fd, 0) << "connection " << i;
    const std::string& bytes = partial[i % 4];
    ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    slow.push_back(fd);
  }
  httplib::Client client("127.0.0.1", running.port);
  client.set_read_timeout(30, 0);
  auto health = client.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto post = client.Post("/v1/x", {{"Authorization", "Bearer secret"}}, "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->body, "POST /v1/x 2");
  for (const int fd : slow) close(fd);
}

}  // namespace
}  // namespace minimax
