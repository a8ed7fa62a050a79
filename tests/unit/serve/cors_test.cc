// CORS: which origins are answered and with what (serve/cors.h), the flags' two list forms, and
// on a real transport: a preflight from an allowed origin is 204 with the headers and needs no
// key, another origin's gets what it got before CORS (405, no CORS header), replies and refusals
// to an allowed origin carry Access-Control-Allow-Origin, and a server without --allowed-origins
// sends no CORS header at all; --allow-credentials for listed origins only.
#include "serve/cors.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "base/error.h"
#include "serve/http_server.h"

namespace minimax {
namespace {

HttpHead head_of(std::string method, std::vector<std::pair<std::string, std::string>> headers) {
  HttpHead head;
  head.method = std::move(method);
  head.path = "/v1/chat/completions";
  head.headers = std::move(headers);
  return head;
}

CorsOptions listed() {
  CorsOptions cors;
  cors.origins = {"http://app.example", "http://localhost:3000"};
  return cors;
}

TEST(Cors, ListsAsJsonOrCommaSeparated) {
  EXPECT_EQ(parse_cors_list(R"(["http://a.example", "http://b.example"])", "--allowed-origins"),
            (std::vector<std::string>{"http://a.example", "http://b.example"}));
  EXPECT_EQ(parse_cors_list("http://a.example, http://b.example", "--allowed-origins"),
            (std::vector<std::string>{"http://a.example", "http://b.example"}));
  EXPECT_EQ(parse_cors_list("*", "--allowed-origins"), (std::vector<std::string>{"*"}));
  EXPECT_THROW(parse_cors_list("[\"a\",", "--allowed-origins"), Error);
  EXPECT_THROW(parse_cors_list("[1]", "--allowed-origins"), Error);
  EXPECT_THROW(parse_cors_list("a,,b", "--allowed-origins"), Error);
}

TEST(Cors, OffUnlessOriginsAreGiven) {
  const CorsOptions off;
  EXPECT_FALSE(off.enabled());
  const HttpHead head = head_of("POST", {{"Origin", "http://app.example"}});
  EXPECT_EQ(cors_reply_headers(off, head), "");
  EXPECT_EQ(cors_preflight_headers(off,
                                   head_of("OPTIONS", {{"Origin", "http://app.example"},
                                                       {"Access-Control-Request-Method", "POST"}}),
                                   "POST"),
            std::nullopt);
}

TEST(Cors, ListedOriginIsEchoedWithVaryOthersGetNothing) {
  EXPECT_EQ(cors_reply_headers(listed(), head_of("POST", {{"origin", "http://app.example"}})),
            "Access-Control-Allow-Origin: http://app.example\r\nVary: Origin\r\n");
  EXPECT_EQ(cors_reply_headers(listed(), head_of("POST", {{"Origin", "http://evil.example"}})), "");
  EXPECT_EQ(cors_reply_headers(listed(), head_of("POST", {})), "");  // not a browser
  CorsOptions any;
  any.origins = {"*"};
  EXPECT_EQ(cors_reply_headers(any, head_of("GET", {{"Origin", "http://x.example"}})),
            "Access-Control-Allow-Origin: *\r\n");
}

TEST(Cors, PreflightAnswersTheRouteMethodsAndTheAskedHeaders) {
  const HttpHead preflight =
      head_of("OPTIONS", {{"Origin", "http://app.example"},
                          {"Access-Control-Request-Method", "POST"},
                          {"Access-Control-Request-Headers", "authorization, content-type"}});
  EXPECT_EQ(cors_preflight_headers(listed(), preflight, "POST"),
            "Access-Control-Allow-Origin: http://app.example\r\nVary: Origin\r\n"
            "Access-Control-Allow-Methods: POST, OPTIONS\r\n"
            "Access-Control-Allow-Headers: authorization, content-type\r\n"
            "Access-Control-Max-Age: 600\r\n");
  CorsOptions fixed = listed();
  fixed.methods = {"GET", "POST"};
  fixed.headers = {"Authorization", "Content-Type"};
  EXPECT_EQ(cors_preflight_headers(fixed, preflight, "GET"),
            "Access-Control-Allow-Origin: http://app.example\r\nVary: Origin\r\n"
            "Access-Control-Allow-Methods: GET, POST\r\n"
            "Access-Control-Allow-Headers: Authorization, Content-Type\r\n"
            "Access-Control-Max-Age: 600\r\n");
  EXPECT_NE(cors_preflight_headers(listed(), preflight, "GET")->find("GET, HEAD, OPTIONS"),
            std::string::npos);
  // Not a preflight: OPTIONS without Access-Control-Request-Method, or another origin.
  EXPECT_EQ(cors_preflight_headers(listed(), head_of("OPTIONS", {{"Origin", "http://app.example"}}),
                                   "POST"),
            std::nullopt);
  EXPECT_EQ(cors_preflight_headers(listed(),
                                   head_of("OPTIONS", {{"Origin", "http://evil.example"},
                                                       {"Access-Control-Request-Method", "POST"}}),
                                   "POST"),
            std::nullopt);
}

// --allow-credentials (vLLM's flag): every CORS reply to a listed origin, the preflight's
// included, says so; refused with a "*" origin (browsers reject it) and without origins.
TEST(Cors, CredentialsAreAllowedForListedOriginsOnly) {
  CorsOptions cors = listed();
  cors.allow_credentials = true;
  EXPECT_NO_THROW(check_cors_options(cors));
  EXPECT_EQ(cors_reply_headers(cors, head_of("POST", {{"Origin", "http://app.example"}})),
            "Access-Control-Allow-Origin: http://app.example\r\nVary: Origin\r\n"
            "Access-Control-Allow-Credentials: true\r\n");
  EXPECT_EQ(cors_reply_headers(cors, head_of("POST", {{"Origin", "http://evil.example"}})), "");
  const auto preflight = cors_preflight_headers(
      cors,
      head_of("OPTIONS",
              {{"Origin", "http://app.example"}, {"Access-Control-Request-Method", "POST"}}),
      "POST");
  ASSERT_TRUE(preflight.has_value());
  EXPECT_NE(preflight->find("Access-Control-Allow-Credentials: true\r\n"), std::string::npos);
  EXPECT_EQ(cors_reply_headers(listed(), head_of("POST", {{"Origin", "http://app.example"}}))
                .find("Credentials"),
            std::string::npos);  // not without the flag

  CorsOptions any;
  any.origins = {"*"};
  any.allow_credentials = true;
  try {
    check_cors_options(any);
    ADD_FAILURE() << "credentials with '*' were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--allow-credentials"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'*'"), std::string::npos) << e.what();
  }
  CorsOptions off;
  off.allow_credentials = true;
  EXPECT_THROW(check_cors_options(off), Error);
}

// A transport with one POST route that needs the key, and the tests' raw exchanges.
class PostRoute : public HttpRoutes {
 public:
  HttpReply handle(std::string_view, std::string_view, std::string_view,
                   const ClientAlive&) override {
    return HttpReply{200, "application/json", "{}", {}};
  }
  HttpReply error(std::string_view, int status, std::string_view message) override {
    return HttpReply{status, "text/plain", std::string(message), {}};
  }
  RouteAccess access(std::string_view) override { return RouteAccess{"POST", true}; }
};

struct Serving {
  explicit Serving(HttpServerOptions options) : server(routes, options) {
    port = server.bind();
    thread = std::thread([this] { server.run(); });
  }
  ~Serving() {
    server.stop();
    thread.join();
  }
  // Sends `request` on a new connection and reads until the server closes it.
  std::string exchange(const std::string& request) const {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    std::string reply;
    for (int i = 0; i < 200; ++i) {
      if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    (void)!send(fd, request.data(), request.size(), 0);
    char buffer[4096];
    ssize_t n;
    while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) reply.append(buffer, n);
    close(fd);
    return reply;
  }
  PostRoute routes;
  HttpServer server;
  int port = 0;
  std::thread thread;
};

HttpServerOptions with_cors(std::vector<std::string> origins) {
  HttpServerOptions options;
  options.port = 0;
  options.api_key = "secret";
  options.cors.origins = std::move(origins);
  return options;
}

constexpr const char* kPreflight =
    "OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    "Origin: {}\r\nAccess-Control-Request-Method: POST\r\n"
    "Access-Control-Request-Headers: authorization, content-type\r\n\r\n";

TEST(Cors, PreflightFromAnAllowedOriginIs204WithoutTheKey) {
  const Serving serving(with_cors({"http://app.example"}));
  const std::string reply =
      serving.exchange(fmt::format(fmt::runtime(kPreflight), "http://app.example"));
  EXPECT_EQ(reply.substr(0, reply.find("\r\n")), "HTTP/1.1 204 No Content");
  EXPECT_NE(reply.find("Access-Control-Allow-Origin: http://app.example\r\n"), std::string::npos);
  EXPECT_NE(reply.find("Access-Control-Allow-Methods: POST, OPTIONS\r\n"), std::string::npos);
  EXPECT_NE(reply.find("Access-Control-Allow-Headers: authorization, content-type\r\n"),
            std::string::npos);
  EXPECT_NE(reply.find("Access-Control-Max-Age: 600\r\n"), std::string::npos);
  EXPECT_EQ(reply.find("Content-Length"), std::string::npos);  // none on a 204 (RFC 9110)
}

TEST(Cors, AnotherOriginGetsNoCorsHeaders) {
  const Serving serving(with_cors({"http://app.example"}));
  const std::string reply =
      serving.exchange(fmt::format(fmt::runtime(kPreflight), "http://evil.example"));
  EXPECT_EQ(reply.substr(0, reply.find("\r\n")), "HTTP/1.1 405 Method Not Allowed");
  EXPECT_EQ(reply.find("Access-Control-"), std::string::npos) << reply;
}

TEST(Cors, WithoutAllowedOriginsNothingChanges) {
  const Serving serving(with_cors({}));
  const std::string reply =
      serving.exchange(fmt::format(fmt::runtime(kPreflight), "http://app.example"));
  EXPECT_EQ(reply.substr(0, reply.find("\r\n")), "HTTP/1.1 405 Method Not Allowed");
  EXPECT_EQ(reply.find("Access-Control-"), std::string::npos) << reply;
}

TEST(Cors, RepliesAndRefusalsToAnAllowedOriginCarryAllowOrigin) {
  const Serving serving(with_cors({"*"}));
  const std::string post =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
      "Origin: http://app.example\r\nContent-Length: 2\r\n{}\r\n{{}}";
  const std::string ok =
      serving.exchange(fmt::format(fmt::runtime(post), "Authorization: Bearer secret\r\n"));
  EXPECT_EQ(ok.substr(0, ok.find("\r\n")), "HTTP/1.1 200 OK");
  EXPECT_NE(ok.find("Access-Control-Allow-Origin: *\r\n"), std::string::npos) << ok;
  // The browser app can read why it was refused.
  const std::string refused = serving.exchange(fmt::format(fmt::runtime(post), ""));
  EXPECT_EQ(refused.substr(0, refused.find("\r\n")), "HTTP/1.1 401 Unauthorized");
  EXPECT_NE(refused.find("Access-Control-Allow-Origin: *\r\n"), std::string::npos) << refused;
}

}  // namespace
}  // namespace minimax
