#!/usr/bin/env python3
"""Streams viewport updates to a viewportd session over its WebSocket and prints each reply.

    scripts/ws-client.py BASE_URL SESSION [UPDATES.ndjson] [--token TOKEN]

Reads updates (NDJSON: one JSON object per line) from the file or stdin, sends each as one message
on GET /v1/sessions/SESSION/socket, waits for its reply and prints it on its own line: the plan,
or a problem object carrying "message": n. Prints the close code to stderr if the server closes.
Python 3 standard library only; the token travels as the subprotocol bearer.<token>, as from a
browser. Importable: ViewportSocket is reused by scripts/openapi-conformance.py.
"""
import base64, os, socket, struct, sys, urllib.parse


class ViewportSocket:
    def __init__(self, base, session, token=None, timeout=10):
        url = urllib.parse.urlsplit(base)
        self.sock = socket.create_connection((url.hostname, url.port or 80), timeout=timeout)
        protocols = "viewportd.v1" + (f", bearer.{token}" if token else "")
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /v1/sessions/{session}/socket HTTP/1.1\r\nHost: {url.netloc}\r\n"
                           "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Protocol: {protocols}\r\n\r\n").encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self._recv()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split(" ")[1])
        self.headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
        if self.status != 101:
            raise ConnectionError(f"handshake answered {lines[0]}: {self.buffer.decode(errors='replace')}")

    def _recv(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed")
        return chunk

    def _read(self, count):
        while len(self.buffer) < count:
            self.buffer += self._recv()
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def send(self, payload, opcode=1):
        """One masked frame (text by default)."""
        data = payload.encode() if isinstance(payload, str) else payload
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else
                                         struct.pack("!BH", 0xFE, n) if n < 65536 else struct.pack("!BQ", 0xFF, n))
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def receive(self):
        """The next text message as a string; None when the server closes (code in self.close_code)."""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            payload, opcode = self._read(n), b0 & 0x0F
            if opcode == 9:  # ping: answer like a browser
                self.send(payload, opcode=10)
            elif opcode == 8:
                self.close_code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                self.close_reason = payload[2:].decode(errors="replace")
                return None
            elif opcode in (1, 2):
                return payload.decode()

    def close(self):
        self.send(struct.pack("!H", 1000), opcode=8)
        self.sock.close()


def main():
    args = sys.argv[1:]
    token = None
    if "--token" in args:
        i = args.index("--token")
        token = args[i + 1]
        del args[i:i + 2]
    if len(args) not in (2, 3):
        sys.exit(__doc__)
    try:
        ws = ViewportSocket(args[0], args[1], token)
    except (ConnectionError, OSError) as error:
        sys.exit(f"ws-client: {error}")
    source = open(args[2]) if len(args) == 3 else sys.stdin
    for line in source:
        if not line.strip():
            continue
        ws.send(line.strip())
        reply = ws.receive()
        if reply is None:
            print(f"closed: {ws.close_code} {ws.close_reason}", file=sys.stderr)
            return
        print(reply, flush=True)
    ws.close()


if __name__ == "__main__":
    main()
