#!/usr/bin/env python3
"""A network link with a fixed one-way delay between two network namespaces, for kernels without
sch_netem (`tc qdisc ... netem delay` reports "Specified qdisc kind is unknown"): a TAP device in
each namespace, and this process copying each Ethernet frame from one to the other after DELAY.

    delay_link.py NS_A TAP_A NS_B TAP_B DELAY_MS

The TAP devices must exist (`ip -n NS tuntap add dev TAP mode tap`, then addresses and `up`); it
runs until killed. Frames keep their order in each direction. Python costs a few microseconds per
frame on top of the delay (measure the link at DELAY_MS 0 to see it). Used by
bench/netns_decode.sh (docs/parallel.md, "Across hosts: bytes and delay").
"""
import collections
import ctypes
import fcntl
import os
import select
import struct
import sys
import time

CLONE_NEWNET = 0x40000000
TUNSETIFF = 0x400454CA
IFF_TAP, IFF_NO_PI = 0x0002, 0x1000


def open_tap(netns, name):
    """Attaches to TAP device `name` of namespace `netns` (this process moves there to do it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    with open(f"/run/netns/{netns}") as ns:
        if libc.setns(ns.fileno(), CLONE_NEWNET) != 0:
            sys.exit(f"delay_link: cannot enter namespace {netns}: {os.strerror(ctypes.get_errno())}")
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TAP | IFF_NO_PI))
    return fd


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    ns_a, tap_a, ns_b, tap_b, delay_ms = sys.argv[1:]
    delay = float(delay_ms) / 1000
    a, b = open_tap(ns_a, tap_a), open_tap(ns_b, tap_b)
    peer = {a: b, b: a}
    queued = {a: collections.deque(), b: collections.deque()}  # frames bound for that fd
    while True:
        now = time.monotonic()
        wait = None
        for fd, queue in queued.items():
            while queue and queue[0][0] <= now:
                os.write(fd, queue.popleft()[1])
            if queue:
                due = queue[0][0] - now
                wait = due if wait is None else min(wait, due)
        readable, _, _ = select.select([a, b], [], [], wait)
        now = time.monotonic()
        for fd in readable:
            while True:
                try:
                    frame = os.read(fd, 65536)
                except BlockingIOError:
                    break
                queued[peer[fd]].append((now + delay, frame))


if __name__ == "__main__":
    main()
