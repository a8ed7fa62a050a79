// The buffer between a streaming worker and the event loop: the worker's appends never block,
// the loop writes what the socket takes, and a client too far behind is cut.
#include "serve/stream_buffer.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace minimax {
namespace {

struct SocketPair {
  int fds[2] = {-1, -1};
  SocketPair() {
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    const int small = 4096;
    setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  }
  ~SocketPair() {
    close(fds[0]);
    close(fds[1]);
  }
  std::string read_all() {
    std::string got;
    char buffer[65536];
    for (ssize_t n; (n = recv(fds[1], buffer, sizeof(buffer), MSG_DONTWAIT)) > 0;)
      got.append(buffer, static_cast<size_t>(n));
    return got;
  }
};

TEST(StreamBuffer, WritesWhatTheSocketTakesAndKeepsTheRestInOrder) {
  SocketPair pair;
  StreamBuffer stream(1 << 20);
  std::string sent;
  for (int i = 0; i < 100; ++i) {
    const std::string piece = std::to_string(i) + std::string(1000, 'x') + "\n";
    ASSERT_TRUE(stream.append(piece));
    sent += piece;
  }
  EXPECT_EQ(stream.send_to(pair.fds[0]), StreamBuffer::Send::kBlocked);  // 100 KB > the buffers
  EXPECT_GT(stream.backlog(), 0u);
  std::string received = pair.read_all();
  for (int round = 0; round < 1000 && stream.backlog() > 0; ++round) {
    stream.send_to(pair.fds[0]);
    received += pair.read_all();
  }
  EXPECT_EQ(stream.send_to(pair.fds[0]), StreamBuffer::Send::kDrained);
  received += pair.read_all();
  EXPECT_EQ(received, sent);
  EXPECT_TRUE(stream.take_unsent().empty());
}

TEST(StreamBuffer, AClientTooFarBehindIsCut) {
  StreamBuffer stream(10000);
  EXPECT_TRUE(stream.append(std::string(6000, 'a')));
  EXPECT_FALSE(stream.append(std::string(6000, 'b')));  // 12,000 would be unsent
  EXPECT_TRUE(stream.is_cut());
  EXPECT_FALSE(stream.append("c"));  // and stays cut
  StreamBuffer other(10000);
  other.cut();
  EXPECT_FALSE(other.append("x"));
}

TEST(StreamBuffer, AClosedPeerFailsTheSend) {
  SocketPair pair;
  StreamBuffer stream(1 << 20);
  ASSERT_TRUE(stream.append("data"));
  shutdown(pair.fds[1], SHUT_RDWR);
  close(pair.fds[1]);
  pair.fds[1] = socket(AF_UNIX, SOCK_STREAM, 0);  // closed by the destructor
  EXPECT_EQ(stream.send_to(pair.fds[0]), StreamBuffer::Send::kFailed);
}

TEST(StreamBuffer, TheUnsentTailIsHandedBack) {
  StreamBuffer stream(1 << 20);
  ASSERT_TRUE(stream.append("head "));
  ASSERT_TRUE(stream.append("tail"));
  EXPECT_EQ(stream.take_unsent(), "head tail");
  EXPECT_EQ(stream.backlog(), 0u);
}

}  // namespace
}  // namespace minimax
