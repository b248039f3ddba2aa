#!/usr/bin/env python3
"""Throughput of one WebSocket (GET /v1/sessions/{id}/socket) on a 1,000,000-item list.

    scripts/ws-bench.py BASE_URL [--sequential N] [--pipelined N] [--token TOKEN]

Opens a session on a generated 1M-item list (a `sections` layout: a few bytes), then sends the
small-step trace of `scripts/load.sh stream` (offset +7 pt per update) over one socket:

- sequential: send an update, wait for its plan, repeat (N = 100,000 by default);
- pipelined: a writer thread sends N updates (1,000,000 by default) while the reader counts the
  N plans.

Prints updates/s for each. Messages are pre-built with a zero masking key (legal, RFC 6455 §5.3)
so that the client spends its time on the socket, not on masking; every reply is checked to be a
plan, not a problem. Standard library only (reuses scripts/ws-client.py).
"""
import importlib.util, json, os, struct, sys, threading, time, urllib.request

spec = importlib.util.spec_from_file_location("ws_client", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ws-client.py"))
ws_client = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ws_client)


def frame(text):
    data = text.encode()
    n = len(data)
    return bytes([0x81, 0x80 | n]) + b"\0\0\0\0" + data if n < 126 else struct.pack("!BBH", 0x81, 0xFE, n) + b"\0\0\0\0" + data


def trace(count, start=0, step=7, max_y=50 * 1_000_000 - 667):
    period = 2 * max_y
    for i in range(start, start + count):
        y = ((i + 1) * step) % period
        yield frame('{"offset":[0,%d]}' % (y if y <= max_y else period - y))


def read_plans(ws, count):
    """Reads `count` text messages, checking each is a plan; returns nothing."""
    seen = 0
    buffer, position = ws.buffer, 0
    while seen < count:
        while True:
            if len(buffer) - position < 2:
                break
            n = buffer[position + 1] & 0x7F
            header = 2 if n < 126 else 4 if n == 126 else 10
            if len(buffer) - position < header:
                break
            if n == 126:
                n = struct.unpack_from("!H", buffer, position + 2)[0]
            elif n == 127:
                n = struct.unpack_from("!Q", buffer, position + 2)[0]
            if len(buffer) - position < header + n:
                break
            if buffer[position] & 0x0F != 1 or buffer[position + header + 2] != ord("s"):
                sys.exit(f"not a plan: {bytes(buffer[position:position + header + n])[:300]!r}")
            position += header + n
            seen += 1
            if seen == count:
                break
        buffer = buffer[position:] + ws.sock.recv(1 << 20) if seen < count else buffer[position:]
        position = 0
    ws.buffer = buffer


def main():
    args = sys.argv[1:]
    options = {"--sequential": "100000", "--pipelined": "1000000", "--token": None}
    for name in list(options):
        if name in args:
            i = args.index(name)
            options[name] = args[i + 1]
            del args[i:i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    base, token = args[0].rstrip("/"), options["--token"]
    sequential, pipelined = int(options["--sequential"]), int(options["--pipelined"])
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    body = {"layout": {"sections": [{"id": "feed", "reuse": "row", "list": {"count": 1_000_000, "size": [375, 50]}}]}, "viewport": [375, 667]}
    request = urllib.request.Request(base + "/v1/sessions", data=json.dumps(body).encode(), headers=headers, method="POST")
    session = json.load(urllib.request.urlopen(request))["session"]
    ws = ws_client.ViewportSocket(base, session, token, timeout=60)

    started = time.perf_counter()
    for message in trace(sequential):
        ws.sock.sendall(message)
        read_plans(ws, 1)
    seconds = time.perf_counter() - started
    print(f"sequential (send, wait for the plan): {sequential:,} updates in {seconds:.2f} s = {sequential / seconds:,.0f} updates/s "
          f"({seconds / sequential * 1e6:.1f} µs per round trip)")

    payload = b"".join(trace(pipelined, start=sequential))
    writer = threading.Thread(target=ws.sock.sendall, args=(payload,))
    started = time.perf_counter()
    writer.start()
    read_plans(ws, pipelined)
    seconds = time.perf_counter() - started
    writer.join()
    print(f"pipelined (send all, read all):       {pipelined:,} updates in {seconds:.2f} s = {pipelined / seconds:,.0f} updates/s")
    ws.close()


if __name__ == "__main__":
    main()
