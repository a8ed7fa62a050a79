// The gates' HTTP and OpenAI client over real loopback sockets against an in-process server:
// URL forms, bodies (length and chunked), bad statuses and refused connections.
#include "gates/http_client.h"

#include <gtest/gtest.h>

#include "fake_server.h"
#include "gates/openai_client.h"

namespace minimax::gates {
namespace {

using testing::FakeReply;
using testing::FakeRequest;
using testing::FakeServer;

std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HttpUrl, AcceptsRootAndOpenAiBaseForms) {
  const HttpUrl a = parse_http_url("http://127.0.0.1:8000");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 8000);
  EXPECT_EQ(a.base_path, "");
  EXPECT_EQ(parse_http_url("http://localhost:8000/v1/").base_path, "");
  EXPECT_EQ(parse_http_url("http://h/proxy/v1").base_path, "/proxy");
  EXPECT_EQ(parse_http_url("http://h").port, 80);
  const HttpUrl v6 = parse_http_url("http://[::1]:9000");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 9000);
}

TEST(HttpUrl, RejectsBadFormsNamingTheFlag) {
  EXPECT_NE(error_of([] {
              parse_http_url("https://x:1", "--compare-url");
            }).find("--compare-url https://x:1: https is not supported"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_http_url("127.0.0.1:8000"); }).find("expected http://"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_http_url("http://h:99999"); }).find("bad port"), std::string::npos);
  EXPECT_NE(error_of([] { parse_http_url("http://h:x"); }).find("bad port"), std::string::npos);
  EXPECT_NE(error_of([] { parse_http_url("http://:80"); }).find("no host"), std::string::npos);
}

TEST(HttpResponse, ParsesLengthChunkedAndCloseDelimitedBodies) {
  HttpResponse r = parse_http_response(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}xx", "s");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body, "{}");
  r = parse_http_response(
      "HTTP/1.1 404 Not Found\r\ntransfer-encoding: "
      "chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n",
      "s");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, "abcde");
  EXPECT_EQ(parse_http_response("HTTP/1.0 200 OK\r\n\r\nrest", "s").body, "rest");
  EXPECT_NE(error_of([] { parse_http_response("", "POST u"); }).find("POST u: the server closed"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_http_response("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{}", "s");
            }).find("truncated"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_http_response("SSH-2.0\r\n\r\n", "s"); }).find("not an HTTP reply"),
            std::string::npos);
}

TEST(HttpClient, SendsRequestsAndReadsReplies) {
  FakeRequest seen;
  FakeServer server([&](const FakeRequest& request) {
    seen = request;
    return FakeReply{200, R"({"ok": true, "path": ")" + request.path + "\"}", /*chunked=*/true};
  });
  const HttpClient client(parse_http_url(server.url() + "/v1"), "secret", 10.0);
  const HttpResponse response = client.post_json("/v1/chat/completions", R"({"a":1})");
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(nlohmann::json::parse(response.body)["path"], "/v1/chat/completions");
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.body, R"({"a":1})");
  EXPECT_NE(seen.headers.find("Authorization: Bearer secret"), std::string::npos);
  EXPECT_NE(seen.headers.find("Content-Type: application/json"), std::string::npos);
  EXPECT_EQ(client.get("/health").status, 200);
  EXPECT_EQ(seen.method, "GET");
  EXPECT_EQ(seen.path, "/health");
}

TEST(OpenAiClient, BadStatusIsAnErrorWithTheUrlStatusAndServerMessage) {
  FakeServer server([](const FakeRequest&) {
    return FakeReply{400,
                     R"({"error": {"message": "prompt too long", "type": "BadRequestError"}})"};
  });
  const OpenAiClient client(parse_http_url(server.url()), "", "tiny", 10.0);
  const std::string message = error_of([&] {
    client.chat({{"messages", nlohmann::json::array()}});
  });
  EXPECT_NE(message.find(server.url() + "/v1/chat/completions: HTTP 400: prompt too long"),
            std::string::npos)
      << message;
}

TEST(OpenAiClient, NonJsonReplyAndModelDiscovery) {
  FakeServer server([](const FakeRequest& request) {
    if (request.path == "/v1/models") return FakeReply{200, R"({"data": [{"id": "tiny-m3"}]})"};
    return FakeReply{200, "<html>"};
  });
  OpenAiClient client(parse_http_url(server.url()), "", "", 10.0);
  client.resolve_model();
  EXPECT_EQ(client.model(), "tiny-m3");
  EXPECT_NE(error_of([&] {
              client.completion({{"prompt", "x"}});
            }).find("not a JSON object"),
            std::string::npos);
}

TEST(OpenAiClient, UnauthorizedModelListIsAnError) {
  FakeServer server([](const FakeRequest&) {
    return FakeReply{401, R"({"error": {"message": "invalid API key"}})"};
  });
  OpenAiClient client(parse_http_url(server.url()), "wrong", "", 10.0);
  const std::string message = error_of([&] { client.resolve_model(); });
  EXPECT_NE(message.find("/v1/models: HTTP 401: invalid API key"), std::string::npos) << message;
}

TEST(HttpClient, ConnectionRefusedIsAConnectionErrorNamingTheUrl) {
  const std::string url = "http://127.0.0.1:" + std::to_string(testing::unused_port());
  const HttpClient client(parse_http_url(url), "", 5.0);
  try {
    client.get("/v1/models");
    FAIL() << "expected a ConnectionError";
  } catch (const ConnectionError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot connect to " + url), std::string::npos)
        << e.what();
  }
}

TEST(HttpClient, UnknownHostIsAConnectionError) {
  const HttpClient client(parse_http_url("http://no-such-host.invalid:8000"), "", 5.0);
  EXPECT_THROW(client.get("/v1/models"), ConnectionError);
}

TEST(HttpClient, SilentServerTimesOut) {
  FakeServer server([](const FakeRequest&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    return FakeReply{200, "{}"};
  });
  const HttpClient client(parse_http_url(server.url()), "", 0.2);
  try {
    client.get("/health");
    FAIL() << "expected a ConnectionError";
  } catch (const ConnectionError& e) {
    EXPECT_NE(std::string(e.what()).find("no reply within"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace minimax::gates
