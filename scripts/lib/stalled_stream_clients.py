#!/usr/bin/env python3
"""Streaming clients that stop reading (issue 32 F5), for tests/e2e/serve_stalled_streams.sh.

Usage: stalled_stream_clients.py HOST PORT COUNT MAX_TOKENS

Opens COUNT connections with a small receive buffer, sends a streamed chat on each (four choices
with 20 top logprobs per token: about 24 MB a stream, far more than the socket buffers and the
server's 1 MiB backlog hold together, however they autotune) and reads nothing. Prints "ready" once all
are sent, then waits for a line on stdin; then reads each connection to its end and prints, per
connection, "cut" (the server closed it before the stream's last chunk) or "complete".
"""
import json
import socket
import sys

host, port, count, max_tokens = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
body = json.dumps({"messages": [{"role": "user", "content": "hi"}], "max_tokens": max_tokens,
                   "n": 4, "stream": True, "logprobs": True, "top_logprobs": 20, "ignore_eos": True,
                   "temperature": 1}).encode()
request = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\n"
           f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
sockets = []
for _ in range(count):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: a small window
    s.connect((host, port))
    s.sendall(request)
    sockets.append(s)
print("ready", flush=True)
sys.stdin.readline()
for s in sockets:
    s.settimeout(60)
    tail = b""
    try:
        while True:
            data = s.recv(1 << 20)
            if not data:
                break
            tail = (tail + data)[-64:]
    except OSError:
        pass  # a reset: cut as well
    print("complete" if tail.endswith(b"0\r\n\r\n") else "cut", flush=True)
