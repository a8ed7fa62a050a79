// A small blocking HTTP/1.1 client (plain http, one connection per request) for talking to running
// OpenAI-compatible servers. Debian's cpp-httplib is a compiled library built with OpenSSL, so
// using it would need a link change and an ABI-matching define; the gates need only POST/GET.
#pragma once

#include <string>
#include <string_view>

#include "base/error.h"

namespace minimax::gates {

// Connection failures (refused, unknown host, timeout, reset): the command line maps these to
// exit status 2, distinct from a gate that ran and failed.
class ConnectionError : public Error {
 public:
  using Error::Error;
};

struct HttpUrl {
  std::string host;
  int port = 80;
  std::string base_path;     // "" or "/prefix" without a trailing slash or "/v1"
  std::string text;          // as the user gave it, for messages
  std::string root() const;  // "http://host:port/prefix": endpoint paths are appended to it
};

// `text` without leading and trailing white space (std::isspace): header fields, answers.
std::string_view trim_whitespace(std::string_view text);

// Parses "http://host[:port][/prefix]". A trailing "/" and a trailing "/v1" are dropped so that
// both the server root and an OpenAI base URL are accepted. Throws Error naming `what`.
HttpUrl parse_http_url(const std::string& url, std::string_view what = "--url");

struct HttpResponse {
  int status = 0;
  std::string content_type;
  std::string body;
};

class HttpClient {
 public:
  // `api_key` "" sends no Authorization header; `timeout_seconds` bounds connect and each read.
  explicit HttpClient(HttpUrl url, std::string api_key = "", double timeout_seconds = 600.0);

  HttpResponse get(std::string_view path) const;
  HttpResponse post_json(std::string_view path, std::string_view body) const;
  const HttpUrl& url() const { return url_; }

 private:
  HttpResponse request(std::string_view method, std::string_view path, std::string_view body) const;

  HttpUrl url_;
  std::string api_key_;
  double timeout_seconds_;
};

// Decodes a complete HTTP/1.1 response (status line, headers, body with Content-Length, chunked
// transfer encoding, or read to close). Throws Error naming `source` when it is malformed.
HttpResponse parse_http_response(std::string_view raw, std::string_view source);

}  // namespace minimax::gates
