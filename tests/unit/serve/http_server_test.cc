// The HTTP transport on loopback with stub routes: API-key checks only on /v1/*, errors for
// unknown routes and oversized bodies come from the routes' error(), streamed replies arrive in
// pieces, and a streamed reply notices a client that went away.
#include "serve/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <thread>

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
  HttpReply error(int status, std::string_view message) override {
    return HttpReply{status, "application/json", "error: " + std::string(message), {}};
  }
  std::atomic<bool> saw_disconnect{false};
  std::atomic<bool> saw_gone{false};
  bool stop_after_three = true;
};

struct Running {
  explicit Running(StubRoutes& routes, HttpServerOptions options) : server(routes, options) {
    options.port = 0;
    port = server.bind();
    thread = std::thread([this] { server.run(); });
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
}

TEST(HttpServer, KeyIsCheckedOnV1Only) {
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

}  // namespace
}  // namespace minimax
