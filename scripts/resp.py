"""The small Redis (RESP2) client the stdlib-only scripts share: scripts/partition-campaign.py and
scripts/store-script-cost.py import it from this folder."""

import socket


class Resp:
    """A minimal RESP2 client on loopback: pipelines of commands; an error reply is answered as a
    RuntimeError value, not raised."""

    def __init__(self, port, timeout=5):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.file = self.sock.makefile("rb")

    @staticmethod
    def encode(args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def read(self):
        line = self.file.readline()
        if not line:
            raise ConnectionError("redis closed the connection")
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.file.read(n + 2)[:-2]
            return data
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise ConnectionError(f"bad reply {line!r}")

    def pipeline(self, commands):
        self.sock.sendall(b"".join(self.encode(c) for c in commands))
        return [self.read() for _ in commands]

    def call(self, *args):
        return self.pipeline([args])[0]

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass
