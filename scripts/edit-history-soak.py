#!/usr/bin/env python3
"""A session that edits its stacks without end, on two instances sharing one Redis.

Starts a redis-server and two viewportd instances (`STORE_URL`) on free loopback ports, posts a
chat of 40 measured messages, opens a session on instance A and PATCHes it there: insert 20
messages, remove them, `--rounds` times. Every `--every` rounds it reports the session's snapshot
in the store (`HSTRLEN session:{cell}:<id> snap`), instance A's RSS, and the time a viewport update takes
on instance B (a handover: B restores the session from its snapshot, replaying its edits), then
continues on A (another handover back). Unfolded, the snapshot would grow by ~1.3 KB a round;
it folds into a checkpoint once the edits outgrow the layout's binary form.

    python3 scripts/edit-history-soak.py --binary .build/release/viewportd --rounds 3600 --every 600
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read() or b"null")


def wait_http(port, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            request(port, "GET", "/healthz")
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"viewportd on {port} did not start")


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=".build/release/viewportd")
    parser.add_argument("--rounds", type=int, default=3600)
    parser.add_argument("--every", type=int, default=600)
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="edit-soak-")
    redis_port = free_port()
    procs = []
    try:
        procs.append(subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for _ in range(100):
            if subprocess.run(["redis-cli", "-p", str(redis_port), "ping"], capture_output=True).returncode == 0:
                break
            time.sleep(0.05)
        ports = [free_port(), free_port()]
        for k, port in enumerate(ports):
            env = dict(os.environ, HTTP_HOST="127.0.0.1", HTTP_PORT=str(port),
                       STORE_URL=f"redis://127.0.0.1:{redis_port}", LOG_LEVEL="warning")
            log = open(os.path.join(work, f"viewportd-{k}.log"), "w")
            procs.append(subprocess.Popen([args.binary], env=env, stdout=log, stderr=log))
            wait_http(port)
        a, b = ports
        pid_a = procs[1].pid

        items = [{"id": f"m{k}", "size": [375, 40 + k % 7 * 10]} for k in range(40)]
        layout = request(a, "POST", "/v1/layouts", {"sections": [{"id": "chat", "reuse": "msg", "stack": {
            "items": items, "estimate": [375, 60], "spacing": 4}}]})["layout"]
        session = request(a, "POST", "/v1/sessions", {"layout": layout, "viewport": [375, 600], "buffer": 50})["session"]
        print(f"{'rounds':>7} {'edits':>6} {'snapshot B':>11} {'RSS A MB':>9} {'update on B ms':>15}")
        for round in range(1, args.rounds + 1):
            ids = [f"r{round}n{k}" for k in range(20)]
            request(a, "PATCH", f"/v1/sessions/{session}/layout",
                    {"insert": [{"at": "end", "section": "chat", "items": [{"id": i, "size": [375, 50]} for i in ids]}]})
            request(a, "PATCH", f"/v1/sessions/{session}/layout", {"remove": ids})
            if round % args.every == 0 or round == args.rounds:
                started = time.perf_counter()
                request(b, "POST", f"/v1/sessions/{session}/viewport", {"offset": [0, round % 300]})
                handover_ms = (time.perf_counter() - started) * 1000
                # The session's key carries its cell's hash tag: `viewportd:session:{<cell>}:<id>`.
                key = subprocess.run(["redis-cli", "-p", str(redis_port), "--scan", "--pattern", f"viewportd:session:*:{session}"],
                                     capture_output=True, text=True).stdout.split()
                size = subprocess.run(["redis-cli", "-p", str(redis_port), "HSTRLEN", key[0] if key else "-", "snap"],
                                      capture_output=True, text=True).stdout.strip()
                print(f"{round:>7} {2 * round:>6} {size:>11} {rss_kb(pid_a) / 1024:>9.1f} {handover_ms:>15.1f}", flush=True)
                # Back to A (another handover) for the next rounds.
                request(a, "POST", f"/v1/sessions/{session}/viewport", {"offset": [0, 0]})
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    main()
