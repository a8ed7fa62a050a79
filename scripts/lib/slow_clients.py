#!/usr/bin/env python3
"""Holds many slow or idle HTTP connections open against a server, for the slow-client test
(tests/e2e/serve_slow_clients.sh) and benchmark (bench/serve_slow_clients.sh).

Usage: slow_clients.py HOST PORT COUNT
Opens COUNT connections in four kinds, a quarter each: idle (nothing sent), a request head cut
off mid-header, a body promised by Content-Length and cut off, a chunked body cut off. Every
second one more byte is sent on a tenth of them (dripping, so a per-read timeout never fires).
Prints "ready N" once all are open (N = how many connected), then keeps them until stdin closes.
"""
import select
import socket
import sys
import time

PARTIAL = [
    b"",
    b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Le",
    b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"messages\"",
    b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\nab",
]


def main():
    host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    held = []
    for i in range(count):
        s = socket.create_connection((host, port), timeout=10)
        s.sendall(PARTIAL[i % len(PARTIAL)])
        held.append(s)
    print(f"ready {len(held)}", flush=True)
    drip = held[::10]
    while True:
        readable, _, _ = select.select([sys.stdin], [], [], 1.0)
        if readable and not sys.stdin.readline():
            break
        for s in drip:
            try:
                s.sendall(b"x")
            except OSError:
                pass
    for s in held:
        s.close()


if __name__ == "__main__":
    main()
