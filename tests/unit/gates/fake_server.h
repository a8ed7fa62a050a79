// A tiny in-process HTTP server for the gates' client tests: one thread, one request per
// connection, replies from a handler, so the client is exercised over real loopback sockets.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace minimax::gates::testing {

struct FakeReply {
  int status = 200;
  std::string body;
  bool chunked = false;  // send the body with Transfer-Encoding: chunked, in small pieces
};

struct FakeRequest {
  std::string method;
  std::string path;
  std::string headers;  // the raw header block
  std::string body;
};

class FakeServer {
 public:
  using Handler = std::function<FakeReply(const FakeRequest&)>;
  explicit FakeServer(Handler handler);
  ~FakeServer();
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_; }

 private:
  void serve();

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

// A port on 127.0.0.1 that nothing listens on (bound, then closed).
int unused_port();

}  // namespace minimax::gates::testing
