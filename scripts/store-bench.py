#!/usr/bin/env python3
"""Measures the shared store's targets on loopback with real processes (docs/operations/store.md): a redis-server and viewportd instances sharing it, all started and stopped here.

1. handover: a session whose updates alternate between two instances, so that every request is
   for a session the other instance owns: latency of each (p50, p99, max), against the same
   updates to the owner;
2. a 1M-item layout posted on instance A, then a session opened on instance B by its id: the
   time B takes to fetch, decode and index it;
3. kill -9 of the owner: time until another instance answers the session's next update 200
   (503 with Retry-After until the dead owner's lease ends), and whether a resync was needed;
4. parking (`store.parkAfter` 2 s here): the update that takes a parked session back, on the
   instance that parked it and on another, against updates of a held one.

    scripts/store-bench.py [--binary .build/release/viewportd] [--items 1000000] [--hops 500] [--parks 10]
"""
import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Instance:
    def __init__(self, binary, redis_url, log_dir, name, lease="2", park="30"):
        self.port = free_port()
        self.log = open(os.path.join(log_dir, name + ".log"), "wb")
        env = dict(os.environ, HTTP_HOST="127.0.0.1", HTTP_PORT=str(self.port), STORE_URL=redis_url,
                   STORE_LEASE_TIMEOUT=lease, HTTP_MAX_BODY_BYTES="1073741824", LAYOUTS_MAX_ITEMS="2000000",
                   HTTP_CONNECTION_TIMEOUT="600", STORE_PARK_AFTER=park)
        self.process = subprocess.Popen([binary], stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=log_dir)
        deadline = time.time() + 30
        while time.time() < deadline:
            if open(self.log.name, "rb").read().find(b"listening on http://") >= 0:
                break
            if self.process.poll() is not None:
                sys.exit(f"{name} exited: {open(self.log.name).read()}")
            time.sleep(0.05)
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def request(self, method, path, body=None):
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        self.connection.request(method, path, body=data, headers=headers)
        response = self.connection.getresponse()
        text = response.read()
        return response.status, (json.loads(text) if text and response.getheader("Content-Type", "").startswith("application/") else text)

    def rss_mb(self):
        """The process's resident memory (VmRSS), in MB."""
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self, sig=signal.SIGTERM):
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/viewportd"))
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--hops", type=int, default=500)
    parser.add_argument("--parks", type=int, default=10, help="parked sessions taken back, per instance (each waits 2.5 s)")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    work = tempfile.mkdtemp(prefix="viewportd-store-bench.")
    redis_port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                              "--protected-mode", "no", "--loglevel", "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{redis_port}"
    time.sleep(0.3)
    instances = []
    try:
        a = Instance(binary, url, work, "a")
        instances.append(a)
        b = Instance(binary, url, work, "b")
        instances.append(b)
        c = Instance(binary, url, work, "c")
        instances.append(c)
        # 1. Handover on every request.
        items = [{"id": str(i), "rect": [0, 50 * i, 375, 50], "reuse": "row"} for i in range(10_000)]
        status, stored = a.request("POST", "/v1/layouts", {"items": items})
        layout = stored["layout"]
        _, opened = a.request("POST", "/v1/sessions", {"layout": layout, "viewport": [375, 667]})
        session = opened["session"]
        owner_only, hops = [], []
        y = 0
        for seq in range(1, 201):  # warm up and measure the owner alone
            y += 97
            t = time.perf_counter()
            status, _ = a.request("POST", f"/v1/sessions/{session}/viewport", {"offset": [0, y], "seq": seq})
            owner_only.append((time.perf_counter() - t) * 1000)
            assert status == 200
        seq = 200
        for k in range(args.hops):
            seq += 1
            y += 97
            instance = b if k % 2 == 0 else a
            t = time.perf_counter()
            status, answer = instance.request("POST", f"/v1/sessions/{session}/viewport", {"offset": [0, y], "seq": seq})
            hops.append((time.perf_counter() - t) * 1000)
            assert status == 200, answer
        print(f"update on the owner:        p50 {percentile(owner_only, 50):.3f} ms  p99 {percentile(owner_only, 99):.3f} ms")
        print(f"update on another instance (handover every request, {args.hops}): p50 {percentile(hops, 50):.3f} ms  "
              f"p99 {percentile(hops, 99):.3f} ms  max {max(hops):.3f} ms")

        # 2. A large layout posted on A, opened on C.
        body = ("{\"items\":[" + ",".join('{"id":"%d","rect":[0,%d,375,50],"reuse":"row"}' % (i, 50 * i) for i in range(args.items)) + "]}").encode()
        t = time.perf_counter()
        status, stored = a.request("POST", "/v1/layouts", body)
        post = time.perf_counter() - t
        assert status in (200, 201), stored
        rss_before = c.rss_mb()
        t = time.perf_counter()
        status, opened = c.request("POST", "/v1/sessions", {"layout": stored["layout"], "viewport": [375, 667]})
        open_elsewhere = time.perf_counter() - t
        assert status == 201, opened
        time.sleep(1)
        rss_added = c.rss_mb() - rss_before
        stored_bytes = int(subprocess.check_output(["redis-cli", "-p", str(redis_port), "STRLEN", f"viewportd:layout:{stored['layout']}"]).strip())
        print(f"{args.items}-item layout: POST on A {post:.2f} s ({len(body) / 1e6:.0f} MB of JSON, {stored_bytes / 1e6:.1f} MB stored); "
              f"a session on it opened on another instance in {open_elsewhere:.2f} s, which grew by "
              f"{rss_added:.1f} MB of RSS ({rss_added * 1024 * 1024 / args.items:.1f} B per item)")

        # 3. kill -9 of the owner.
        _, opened = a.request("POST", "/v1/sessions", {"layout": layout, "viewport": [375, 667]})
        session = opened["session"]
        for seq in range(1, 21):
            a.request("POST", f"/v1/sessions/{session}/viewport", {"offset": [0, 97 * seq], "seq": seq})
        a.stop(signal.SIGKILL)
        killed = time.perf_counter()
        statuses = {}
        resync = False
        while True:
            status, answer = b.request("POST", f"/v1/sessions/{session}/viewport", {"offset": [0, 97 * 21], "seq": 21})
            statuses[status] = statuses.get(status, 0) + 1
            if status == 409 and answer.get("resync"):
                _, state = b.request("GET", f"/v1/sessions/{session}")
                resync = True
                b.request("POST", f"/v1/sessions/{session}/resync", {"seq": 20, "offset": [0, 97 * 20],
                          "visible": state["visible"], "pool": {k: [{"view": v, "id": "0"} for v in views] for k, views in state["pool"].items()}})
                continue
            if status == 200:
                break
            if time.perf_counter() - killed > 30:
                sys.exit(f"no failover after 30 s: {statuses}")
            time.sleep(0.05)
        print(f"kill -9 of the owner (store.leaseTimeout 2 s): served by another instance after {time.perf_counter() - killed:.2f} s "
              f"(answers meanwhile: {statuses}{', resync needed' if resync else ', no resync needed: everything had been written'})")

        # 4. Parking: sessions left idle for 2.5 s (parked after 2 s), then updated here or elsewhere.
        d = Instance(binary, url, work, "d", park="2")
        instances.append(d)
        e = Instance(binary, url, work, "e", park="2")
        instances.append(e)
        held, back = [], {"d": [], "e": []}
        sessions = []
        for _ in range(args.parks):
            _, opened = d.request("POST", "/v1/sessions", {"layout": layout, "viewport": [375, 667]})
            sessions.append(opened["session"])
        seqs = {session: 0 for session in sessions}
        y = 0
        for name, instance in (("d", d), ("e", e)):
            for session in sessions:  # held: updates on the instance that holds it
                for _ in range(5):
                    seqs[session] += 1
                    y += 97
                    t = time.perf_counter()
                    status, answer = d.request("POST", f"/v1/sessions/{session}/viewport", {"offset": [0, y], "seq": seqs[session]})
                    held.append((time.perf_counter() - t) * 1000)
                    assert status == 200, answer
            time.sleep(2.5)
            for session in sessions:  # parked by d: taken back by the instance named
                seqs[session] += 1
                y += 97
                t = time.perf_counter()
                status, answer = instance.request("POST", f"/v1/sessions/{session}/viewport", {"offset": [0, y], "seq": seqs[session]})
                back[name].append((time.perf_counter() - t) * 1000)
                assert status == 200, answer
        print(f"update of a held session:              p50 {percentile(held, 50):.3f} ms  p99 {percentile(held, 99):.3f} ms")
        print(f"update taking a parked one back here:  p50 {percentile(back['d'], 50):.3f} ms  max {max(back['d']):.3f} ms ({args.parks} sessions)")
        print(f"update taking it back elsewhere:       p50 {percentile(back['e'], 50):.3f} ms  max {max(back['e']):.3f} ms ({args.parks} sessions)")
    finally:
        for instance in instances:
            instance.stop()
        redis.terminate()
        redis.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
