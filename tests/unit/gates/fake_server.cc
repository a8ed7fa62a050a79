// The in-process HTTP server used by the gates' client tests.
#include "fake_server.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace minimax::gates::testing {
namespace {

int bind_loopback(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0)
    throw std::runtime_error("bind failed");
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  *port = ntohs(address.sin_port);
  return fd;
}

std::string read_request(int fd) {
  std::string raw;
  char buffer[8192];
  for (;;) {
    const size_t head_end = raw.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      size_t length = 0;
      const size_t at = raw.find("Content-Length: ");
      if (at != std::string::npos && at < head_end)
        length = std::strtoul(raw.c_str() + at + 16, nullptr, 10);
      if (raw.size() >= head_end + 4 + length) return raw;
    }
    const ssize_t got = ::recv(fd, buffer, sizeof(buffer), 0);
    if (got <= 0) return raw;
    raw.append(buffer, static_cast<size_t>(got));
  }
}

void write_all(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

std::string encode(const FakeReply& reply) {
  std::string out = "HTTP/1.1 " + std::to_string(reply.status) + " X\r\n";
  out += "Content-Type: application/json\r\nConnection: close\r\n";
  if (!reply.chunked) {
    out += "Content-Length: " + std::to_string(reply.body.size()) + "\r\n\r\n" + reply.body;
    return out;
  }
  out += "Transfer-Encoding: chunked\r\n\r\n";
  for (size_t i = 0; i < reply.body.size(); i += 7) {
    const std::string piece = reply.body.substr(i, 7);
    char size[16];
    std::snprintf(size, sizeof(size), "%zx", piece.size());
    out += std::string(size) + "\r\n" + piece + "\r\n";
  }
  return out + "0\r\n\r\n";
}

}  // namespace

FakeServer::FakeServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = bind_loopback(&port_);
  ::listen(listen_fd_, 16);
  thread_ = std::thread([this] { serve(); });
}

FakeServer::~FakeServer() {
  stop_ = true;
  thread_.join();
  ::close(listen_fd_);
}

void FakeServer::serve() {
  while (!stop_) {
    pollfd entry{listen_fd_, POLLIN, 0};
    if (::poll(&entry, 1, 20) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const std::string raw = read_request(fd);
    FakeRequest request;
    const size_t head_end = raw.find("\r\n\r\n");
    const size_t line_end = raw.find("\r\n");
    const std::string line = raw.substr(0, line_end);
    request.method = line.substr(0, line.find(' '));
    const size_t path_start = line.find(' ') + 1;
    request.path = line.substr(path_start, line.find(' ', path_start) - path_start);
    if (head_end != std::string::npos) {
      request.headers = raw.substr(0, head_end);
      request.body = raw.substr(head_end + 4);
    }
    ++requests_;
    write_all(fd, encode(handler_(request)));
    ::close(fd);
  }
}

int unused_port() {
  int port = 0;
  const int fd = bind_loopback(&port);
  ::close(fd);
  return port;
}

}  // namespace minimax::gates::testing
