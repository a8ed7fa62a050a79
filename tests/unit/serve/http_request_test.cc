// Reading request heads and bodies from bytes as they arrive (serve/http_request.h): every split
// of the input gives the same request, limits refuse as soon as they are passed, and framing that
// cannot be trusted is refused with the status that says why.
#include "serve/http_request.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace minimax {
namespace {

constexpr size_t kHead = 1024, kBody = 100;

HeadResult head_of(const std::string& in, HttpHead& head) {
  return read_http_head(in, kHead, kBody, head);
}

int refusal_status(const std::string& in) {
  HttpHead head;
  const HeadResult r = head_of(in, head);
  return r.refusal ? r.refusal->status : 0;
}

TEST(ReadHttpHead, ParsesTheRequestLineAndHeaders) {
  HttpHead head;
  const HeadResult r = head_of(
      "POST /v1/models/a%2Fb?x=1 HTTP/1.1\r\nHost: x\r\n"
      "content-length:  3 \r\nAuthorization: Bearer k\ty\r\n\r\nabc",
      head);
  ASSERT_FALSE(r.refusal);
  EXPECT_EQ(head.method, "POST");
  EXPECT_EQ(head.path, "/v1/models/a/b");
  EXPECT_EQ(head.host, "x");
  EXPECT_EQ(head.framing, BodyFraming::kLength);
  EXPECT_EQ(head.content_length, 3u);
  EXPECT_TRUE(head.keep_alive);
  ASSERT_NE(head.header("AUTHORIZATION"), nullptr);
  EXPECT_EQ(*head.header("authorization"), "Bearer k\ty");  // HTAB is allowed in a value
}

// RFC 9112 §3.2.2: a server accepts a target in absolute-form; the path routes, the authority
// stands for Host (which an HTTP/1.1 client still sends).
TEST(ReadHttpHead, AbsoluteFormTargetsRouteByTheirPath) {
  const struct {
    std::string target, path, host;
  } cases[] = {{"http://127.0.0.1:8080/health", "/health", "127.0.0.1:8080"},
               {"HTTPS://h/v1/models/a%2Fb?x=1", "/v1/models/a/b", "h"},
               {"http://h", "/", "h"},
               {"http://h?q=1", "/", "h"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.target);
    HttpHead head;
    const HeadResult r = head_of("GET " + c.target + " HTTP/1.1\r\nHost: other\r\n\r\n", head);
    ASSERT_FALSE(r.refusal) << r.refusal->message;
    EXPECT_EQ(head.path, c.path);
    EXPECT_EQ(head.host, c.host);
  }
  for (std::string target : {"ftp://h/health", "http:///health", "http://u@h/health", "h/x", "*"}) {
    SCOPED_TRACE(target);
    EXPECT_EQ(refusal_status("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  }
  HttpHead head;  // origin-form whose path starts with "//": a path, not an authority
  ASSERT_FALSE(head_of("GET //h/x HTTP/1.1\r\nHost: x\r\n\r\n", head).refusal);
  EXPECT_EQ(head.path, "//h/x");
  EXPECT_EQ(head.host, "x");
}

// RFC 9112 §3.2: exactly one Host in HTTP/1.1 (HTTP/1.0 may omit it); the credentials once.
TEST(ReadHttpHead, HostOnceInHttp11AndCredentialsOnce) {
  EXPECT_EQ(refusal_status("GET / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(refusal_status("GET http://h/ HTTP/1.1\r\n\r\n"), 400);  // absolute-form too
  EXPECT_EQ(refusal_status("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n"), 400);
  EXPECT_EQ(refusal_status("GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n"), 400);
  EXPECT_EQ(refusal_status("GET / HTTP/1.0\r\n\r\n"), 0);
  EXPECT_EQ(refusal_status("GET / HTTP/1.1\r\nHost:\r\n\r\n"), 0);  // empty is allowed
  EXPECT_EQ(refusal_status("GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\n"
                           "Authorization: Bearer b\r\n\r\n"),
            400);
  EXPECT_EQ(refusal_status("GET / HTTP/1.1\r\nHost: x\r\nX-Api-Key: a\r\nx-api-key: a\r\n\r\n"),
            400);
  // One of each is two different headers, not a credential sent twice.
  EXPECT_EQ(refusal_status("GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\n"
                           "x-api-key: a\r\n\r\n"),
            0);
  HttpHead head;
  const HeadResult r =
      head_of("GET / HTTP/1.1\r\nHost: x\r\nX-Api-Key: a\r\nx-api-key: b\r\n\r\n", head);
  ASSERT_TRUE(r.refusal);
  EXPECT_EQ(r.refusal->message, "the x-api-key header was sent 2 times");
}

// A CR only ends a line together with LF: "X-A: a\rContent-Length: 99" is one header line to
// this reader but two to one that breaks lines at a bare CR, so it is refused.
TEST(ReadHttpHead, BareCrAndControlBytesAre400) {
  const std::string host = "Host: x\r\n";
  for (std::string in :
       {"GET / HTTP/1.1\r\n" + host + "X-A: a\rContent-Length: 99\r\n\r\n",
        "GET / HTTP/1.1\r\n" + host + "X-A: a\r\r\n\r\n",
        "GET / HTTP/1.1\r\n" + host + "X-A\r: a\r\n\r\n", "GET / HTTP/1.1\r\r\n" + host + "\r\n",
        "GET /a\rb HTTP/1.1\r\n" + host + "\r\n", "GET / HTTP/1.1\r\n" + host + "\r\r\n",
        "GET / HTTP/1.1\r\n" + host + "X-A: a\x01b\r\n\r\n",
        "GET / HTTP/1.1\r\n" + host + "X-A: a\x7F\r\n\r\n",
        "GET / HTTP/1.1\r\n" + host + "X-A: \x1b[31m\r\n\r\n",
        "GET / HTTP/1.1\r\n" + host + "X-A: a" + std::string(1, '\0') + "b\r\n\r\n",
        "GET / HTTP/1.1\r\n" + host + "Authorization: Bearer k" + std::string(1, '\0') + "\r\n\r\n",
        "GET /a\x01 HTTP/1.1\r\n" + host + "\r\n", "GET /a\x7F HTTP/1.1\r\n" + host + "\r\n",
        "GET /a" + std::string(1, '\0') + " HTTP/1.1\r\n" + host + "\r\n",
        "GET /a\tb HTTP/1.1\r\n" + host + "\r\n"}) {
    SCOPED_TRACE(::testing::PrintToString(in));
    HttpHead head;
    const HeadResult r = head_of(in, head);
    ASSERT_TRUE(r.refusal);
    EXPECT_EQ(r.refusal->status, 400);
    EXPECT_EQ(r.consumed, 0u);
  }
  // Bytes from 0x80 up (obs-text) stay allowed in values, and %00 in the target is an escape, not
  // a control byte on the wire.
  EXPECT_EQ(refusal_status("GET /a%00 HTTP/1.1\r\n" + host + "X-A: \xC3\xA9\r\n\r\n"), 0);
  // A bare LF still ends a line (RFC 9112 §2.2 lets a recipient accept it).
  EXPECT_EQ(refusal_status("GET / HTTP/1.1\nHost: x\n\n"), 0);
}

TEST(ReadHttpHead, IncompleteUntilTheEmptyLine) {
  const std::string whole = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    HttpHead head;
    const HeadResult r = head_of(whole.substr(0, cut), head);
    EXPECT_FALSE(r.refusal) << cut;
    EXPECT_EQ(r.consumed, 0u) << cut;
  }
  HttpHead head;
  EXPECT_EQ(head_of(whole, head).consumed, whole.size());
}

TEST(ReadHttpHead, ConnectionAndVersionDecideKeepAlive) {
  HttpHead head;
  head_of("GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Close\r\n\r\n", head);
  EXPECT_FALSE(head.keep_alive);
  head_of("GET / HTTP/1.0\r\n\r\n", head);
  EXPECT_FALSE(head.keep_alive);
  head_of("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", head);
  EXPECT_TRUE(head.keep_alive);
}

TEST(ReadHttpHead, RefusalsSayWhy) {
  EXPECT_EQ(refusal_status("GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(2000, 'a')),
            431);  // incomplete
  EXPECT_EQ(
      refusal_status("GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(2000, 'a') + "\r\n\r\n"),
      431);
  EXPECT_EQ(refusal_status("GET /" + std::string(2000, 'a')), 431);
  EXPECT_EQ(refusal_status("GET  / HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(refusal_status("GET x HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(refusal_status("GET / HTTP/2.0\r\n\r\n"), 505);
  EXPECT_EQ(refusal_status("GET / HTTP/1.1\r\nHost: x\r\nNo colon\r\n\r\n"), 400);
  EXPECT_EQ(refusal_status("GET / HTTP/1.1\r\nHost: x\r\nA: b\r\n folded\r\n\r\n"), 400);
  EXPECT_EQ(refusal_status("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"), 400);
  EXPECT_EQ(refusal_status("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n"), 400);
  EXPECT_EQ(refusal_status(
                "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n"),
            400);
  EXPECT_EQ(refusal_status("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n"), 413);
  EXPECT_EQ(refusal_status(
                "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n"),
            413);
  EXPECT_EQ(refusal_status("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"), 400);
  EXPECT_EQ(refusal_status("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                           "Content-Length: 3\r\n\r\n"),
            400);
  EXPECT_EQ(refusal_status("POST / HTTP/1.1\r\nHost: x\r\n\r\n"), 411);
  EXPECT_EQ(
      refusal_status("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nExpect: 200-ok\r\n\r\n"),
      417);
  EXPECT_EQ(refusal_status("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 0);
  // A DELETE without a length has no body, as the OpenAI client sends DELETE /v1/responses/{id}.
  EXPECT_EQ(refusal_status("DELETE /v1/responses/r HTTP/1.1\r\nHost: x\r\n\r\n"), 0);
}

// Feeds `body` to a reader in pieces of `piece` bytes; returns the last step.
BodyReader::Step feed_in_pieces(BodyReader& reader, const std::string& body, size_t piece) {
  std::string in;
  BodyReader::Step step = BodyReader::Step::kMore;
  for (size_t at = 0; at < body.size() && step == BodyReader::Step::kMore; at += piece) {
    in += body.substr(at, piece);
    step = reader.feed(in);
  }
  return step;
}

HttpHead chunked_head() {
  HttpHead head;
  head.method = "POST";
  head.framing = BodyFraming::kChunked;
  return head;
}

TEST(BodyReader, ChunkedBodiesDecodeTheSameForEverySplit) {
  const std::string body = "3;ext=1\r\nabc\r\n00A\r\n0123456789\r\n0\r\nTrailer: t\r\n\r\n";
  for (size_t piece = 1; piece <= body.size(); ++piece) {
    BodyReader reader(chunked_head(), kBody);
    ASSERT_EQ(feed_in_pieces(reader, body, piece), BodyReader::Step::kDone) << piece;
    EXPECT_EQ(reader.take(), "abc0123456789") << piece;
  }
}

TEST(BodyReader, LengthBodiesLeaveTheNextRequestUnread) {
  HttpHead head;
  head.framing = BodyFraming::kLength;
  head.content_length = 3;
  BodyReader reader(head, kBody);
  std::string in = "abcGET /";
  EXPECT_EQ(reader.feed(in), BodyReader::Step::kDone);
  EXPECT_EQ(reader.take(), "abc");
  EXPECT_EQ(in, "GET /");
}

TEST(BodyReader, ChunkedBodyOverTheLimitIsRefusedAtTheChunkThatPassesIt) {
  BodyReader reader(chunked_head(), kBody);
  std::string in = fmt::format("50\r\n{}\r\n", std::string(80, 'a'));
  EXPECT_EQ(reader.feed(in), BodyReader::Step::kMore);
  in = "15\r\n";  // 80 + 21 > 100: refused before any of its data arrives
  EXPECT_EQ(reader.feed(in), BodyReader::Step::kRefused);
  EXPECT_EQ(reader.refusal().status, 413);
  EXPECT_EQ(reader.refusal().message, "request body over 100 bytes");
  BodyReader huge(chunked_head(), kBody);
  in = "ffffffffffffffffffff\r\n";
  EXPECT_EQ(huge.feed(in), BodyReader::Step::kRefused);
  EXPECT_EQ(huge.refusal().status, 413);
}

TEST(BodyReader, MalformedChunkedBodiesAre400) {
  for (std::string body :
       {std::string("x\r\n"), std::string("3\r\nabcd\r\n"), std::string(2000, '1')}) {
    BodyReader reader(chunked_head(), size_t{1} << 30);
    EXPECT_EQ(feed_in_pieces(reader, body, body.size()), BodyReader::Step::kRefused) << body;
    EXPECT_EQ(reader.refusal().status, 400) << body;
  }
}

}  // namespace
}  // namespace minimax
