#!/usr/bin/env python3
"""Redis CPU per session write, side by side on one redis-server started here: the store's write
script (read from Sources/ViewportService/Shared/StoreScripts.swift) as most flushes run it (the
fencing check and the write) and as every eighth of a lease runs it (renewing the lease too),
one call writing 10 sessions (as a writer round does: the figure is per call, divide by 10),
a plain HSET (the floor), and a cell heartbeat (`SET … PX … GET`). Each variant runs in
alternating rounds of pipelined calls over `--sessions` sessions with a `--snapshot`-byte
snapshot; the figures are Redis' own CPU (used_cpu_user + used_cpu_sys) per call, the median of
the rounds.

    scripts/store-script-cost.py [--sessions 1000] [--snapshot 282] [--rounds 5] [--calls 10000] [--batches 1,10,64]

A pipeline of B calls pays one read and one write syscall on the server: with small B that, not
the script, is most of the cost.
"""
import argparse
import hashlib
import os
import re
import socket
import statistics
import subprocess
import tempfile
import time

from resp import Resp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def store_script(name):
    """The Lua source of `static let <name> = RedisScript(#\"\"\" … \"\"\"#)` in StoreScripts.swift."""
    swift = open(os.path.join(ROOT, "Sources/ViewportService/Shared/StoreScripts.swift")).read()
    match = re.search(r'static let ' + name + r' = RedisScript\(#"""\n(.*?)\n\s*"""#\)', swift, re.S)
    if not match:
        raise SystemExit(f"no script {name} in StoreScripts.swift")
    lines = match.group(1).split("\n")
    indent = min(len(l) - len(l.lstrip()) for l in lines if l.strip())
    return "\n".join(l[indent:] for l in lines)


class Redis(Resp):
    """The shared RESP client, raising error replies, with the server's CPU counters."""

    def __init__(self, port):
        super().__init__(port, timeout=None)

    def call(self, *args):
        reply = super().call(*args)
        if isinstance(reply, RuntimeError):
            raise reply
        return reply

    def cpu(self):
        info = self.call("INFO", "cpu").decode()
        return sum(float(l.split(":")[1]) for l in info.splitlines() if l.startswith(("used_cpu_user:", "used_cpu_sys:")))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--snapshot", type=int, default=282)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10000)
    parser.add_argument("--batches", default="1,10,64", help="pipeline lengths, comma-separated")
    args = parser.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    directory = tempfile.mkdtemp(prefix="store-script-cost-")
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                               "--dir", directory, "--loglevel", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                r = Redis(port)
                r.call("PING")
                break
            except (ConnectionRefusedError, OSError):
                time.sleep(0.05)
        version = re.search(r"redis_version:(\S+)", r.call("INFO", "server").decode()).group(1)
        write = store_script("write").encode()
        write_sha = hashlib.sha1(write).hexdigest()
        r.call("SCRIPT", "LOAD", write)
        snapshot = os.urandom(args.snapshot)
        instance, lease, session_ms = "host-1-abcdefgh", 2000, 3_600_000
        r.pipeline([("HSET", f"session:{{{i}}}", "epoch", 1, "ver", 0, "hwm", 1024, "owner", instance) for i in range(args.sessions)])
        version_counter = [0]

        def write_call(i, renew="0", count=1):
            keys, arguments = [], [instance, lease, session_ms]
            for j in range(i, i + count):
                keys += [f"session:{{{j % args.sessions}}}", f"lease:{{{j % args.sessions}}}", "reply:none"]
                arguments += [1, version_counter[0], snapshot, 1024, renew, "write", "0"]
            return ("EVALSHA", write_sha, len(keys), *keys, *arguments)

        def renewing_write_call(i):
            return write_call(i, renew="1")

        def batch_write_call(i):
            return write_call(i * 10, count=10)

        def hset_call(i):
            return ("HSET", f"plain:{{{i}}}", "ver", version_counter[0], "snap", snapshot)

        def beat_call(i):
            return ("SET", f"beat:{{c{i % 1024}}}", instance, "PX", 1000, "GET")

        variants = [("write script", write_call), ("write script, renewing", renewing_write_call),
                    ("write script, 10 per call", batch_write_call), ("plain HSET ver snap", hset_call),
                    ("cell heartbeat SET PX GET", beat_call)]
        batches = [int(b) for b in args.batches.split(",")]
        results = {(name, batch): [] for name, _ in variants for batch in batches}
        for _ in range(args.rounds):
            for (name, make), batch in ((v, b) for v in variants for b in batches):
                before = r.cpu()
                done = 0
                while done < args.calls:
                    version_counter[0] += 1
                    replies = r.pipeline([make((done + k) % args.sessions) for k in range(batch)])
                    bad = [x for x in replies if isinstance(x, RuntimeError)]
                    if bad:
                        raise SystemExit(f"{name}: {bad[0]}")
                    done += batch
                results[(name, batch)].append((r.cpu() - before) * 1e6 / done)
        print(f"Redis {version}, {args.sessions} sessions, {args.snapshot}-byte snapshots, {args.rounds} rounds of {args.calls} "
              f"calls per variant; us of Redis CPU per call (median of the rounds), per pipeline length:")
        print(f"  {'':<28}" + "".join(f"{'pipeline ' + str(b):>14}" for b in batches))
        for name, _ in variants:
            print(f"  {name:<28}" + "".join(f"{statistics.median(results[(name, b)]):14.2f}" for b in batches))
    finally:
        server.terminate()
        server.wait(timeout=10)
        subprocess.run(["rm", "-rf", directory])


if __name__ == "__main__":
    main()
