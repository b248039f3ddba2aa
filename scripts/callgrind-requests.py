#!/usr/bin/env python3
"""Instructions and allocations per request of viewportd, counted by valgrind's callgrind: exact
and repeatable on a noisy machine, unlike a wall-clock load test (user space only: the kernel is
not counted).

    scripts/callgrind-requests.py [--bench PATH] [--requests N] [--shapes empty,steps,jumps]
                                  [--reference]

Starts the real server (`viewport-bench 0 serve PORT`: the default configuration; valgrind 3.19
crashes in viewportd's own start-up here, and cannot read the toolchain's DWARF 5, so a copy
with the debug info stripped runs) under `valgrind --tool=callgrind --instr-atstart=no`, posts the load script's
10,000-row list, opens one session and warms it up; then, per shape (the shapes of
scripts/load.sh: the same offset again, 97 pt steps, 5003 pt jumps), zeroes the counters, sends N
viewport updates over one keep-alive connection, and dumps. Prints per request: instructions in
all, in libmicrohttpd and libc/kernel-facing code, in each component of ours (inclusive), and
the calls to malloc. With --reference it also counts the bare libmicrohttpd server
(scripts/mhd-reference.c, built here) on the same requests.
"""
import argparse
import collections
import glob
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = {"empty": 0, "steps": 97, "jumps": 5003}
# Inclusive instruction counts of these functions (regular expressions on callgrind's names).
COMPONENTS = [
    ("access handler (all of ours)", r"mhdAccessHandler"),
    ("  request start (URI callback)", r"mhdRequestStarted"),
    ("  request completed callback", r"mhdRequestCompleted"),
    ("  RequestDriver.begin (head, headers)", r"RequestDriver(V|C)?5begin"),
    ("  APIHandler.begin (route, lookup)", r"APIHandlerC5begin"),
    ("  Route(path:)", r"RouteO4path"),
    ("  UpdateRequest.decode", r"UpdateRequestV(6decode|10offsetOnly)"),
    ("  withSession (lookup, lock, apply, encode)", r"SessionStoreC04withC0_4hint"),
    ("  ViewportSession.apply (the plan)", r"SessionV5applyy"),
    ("  PlanEncoder.encode", r"PlanEncoderO6encode_6layout"),
    ("  ServiceMetrics.recordRequest", r"MetricsC13recordRequest5route"),
    ("  RequestDriver.queue (response to MHD)", r"RequestDriver(V|C)?5queue"),
    ("MHD_queue_response", r"^MHD_queue_response"),
    ("MHD_create_response_from_buffer", r"^MHD_create_response_from_buffer"),
    ("memset (all callers)", r"^__memset"),
    ("malloc (all callers)", r"^malloc$"),
    ("free (all callers)", r"^(free|cfree)"),
]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_listening(port, proc, seconds=120):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"server exited ({proc.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    sys.exit("server did not listen")


def parse_callgrind(path):
    """Totals of one callgrind dump: (total Ir, inclusive Ir by function name, calls by callee)."""
    names = {}
    self_ir = collections.Counter()
    incl = collections.Counter()
    calls = collections.Counter()
    current = None
    pending_call = None  # (callee, count) waiting for its cost line
    total = 0

    def name_of(token):
        m = re.match(r"\((\d+)\)(?:\s+(.*))?", token)
        if not m:
            return token
        if m[2]:
            names[m[1]] = m[2]
        return names.get(m[1], token)

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("fn="):
                current = name_of(line[3:])
                pending_call = None
            elif line.startswith("cfn="):
                pending_call = [name_of(line[4:]), 0]
            elif line.startswith("calls="):
                if pending_call is not None:
                    pending_call[1] = int(line[6:].split()[0])
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                parts = line.split()
                if len(parts) < 2:
                    continue
                cost = int(parts[1])
                if pending_call is not None:
                    # The inclusive cost of a call from `current` to the callee: part of the
                    # caller's inclusive cost (recursive calls are not added twice).
                    callee, count = pending_call
                    calls[callee] += count
                    if callee != current:
                        incl[current] += cost
                    pending_call = None
                else:
                    self_ir[current] += cost
                    total += cost
            elif line.startswith("summary:") or line.startswith("totals:"):
                pass
    for fn, cost in self_ir.items():
        incl[fn] += cost
    return total, incl, calls


def run(binary, args, port, env, work, label, reference=False):
    out = os.path.join(work, f"callgrind.{label}.out")
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"] + [binary] + args
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, f"{label}.log"), "w"),
                            cwd=REPO)
    return proc, out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", default=os.path.join(REPO, ".build/release/viewport-bench"))
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--shapes", default="empty,steps,jumps")
    parser.add_argument("--reference", action="store_true", help="also count the bare libmicrohttpd server")
    args = parser.parse_args()
    shapes = args.shapes.split(",")
    work = tempfile.mkdtemp(prefix="viewportd-callgrind.")
    procs = []
    try:
        port = free_port()
        binary = os.path.join(work, "viewport-bench")
        shutil.copy(args.bench, binary)
        subprocess.run(["strip", "--strip-debug", binary], check=True)
        proc, out = run(binary, ["0", "serve", str(port)], port, os.environ, work, "viewportd")
        procs.append(proc)
        wait_listening(port, proc)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        items = ",".join('{"id":"%d","rect":[0,%d,375,50],"reuse":"row"}' % (i, 50 * i) for i in range(10000))
        conn.request("POST", "/v1/layouts", '{"items":[%s]}' % items, {"Content-Type": "application/json"})
        layout = json.loads(conn.getresponse().read())["layout"]
        conn.request("POST", "/v1/sessions", json.dumps({"layout": layout, "viewport": [375, 667]}), {"Content-Type": "application/json"})
        session = json.loads(conn.getresponse().read())["session"]
        max_y = 10000 * 50 - 667
        ys = {"y": 1009}
        bodies = {}

        def send(step, count, path, c):
            for _ in range(count):
                ys["y"] = (ys["y"] + step) % max_y
                c.request("POST", path, '{"offset":[0,%d]}' % ys["y"], {"Content-Type": "application/json"})
                r = c.getresponse()
                body = r.read()
                if r.status != 200:
                    sys.exit(f"update answered {r.status}: {body[:200]!r}")
            return body

        path = f"/v1/sessions/{session}/viewport"
        for shape in shapes:
            send(STEPS[shape], 200, path, conn)  # warm up: pools, caches, metric series
            bodies[shape] = send(STEPS[shape], 2, path, conn)
        results = {}
        subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], check=True, capture_output=True)
        for shape in shapes:
            send(STEPS[shape], 20, path, conn)
            subprocess.run(["callgrind_control", "-z", str(proc.pid)], check=True, capture_output=True)
            send(STEPS[shape], args.requests, path, conn)
            subprocess.run(["callgrind_control", "-d", shape, str(proc.pid)], check=True, capture_output=True)
            time.sleep(0.5)
            dumps = sorted(glob.glob(out + "*"), key=os.path.getmtime)
            results[shape] = parse_callgrind(dumps[-1])
        conn.close()

        ref = {}
        if args.reference:
            exe = os.path.join(work, "mhd-reference")
            subprocess.run(["cc", "-O2", "-o", exe, os.path.join(REPO, "scripts/mhd-reference.c"), "-lmicrohttpd"], check=True)
            for shape in shapes:
                body_file = os.path.join(work, f"plan-{shape}.json")
                open(body_file, "wb").write(bodies[shape])
                rport = free_port()
                rproc, rout = run(exe, [str(rport), "2", "16384", "600", body_file, "application/json"], rport, os.environ, work, f"mhd-{shape}")
                procs.append(rproc)
                wait_listening(rport, rproc)
                c = http.client.HTTPConnection("127.0.0.1", rport, timeout=120)
                send(STEPS[shape], 200, path, c)
                subprocess.run(["callgrind_control", "-i", "on", str(rproc.pid)], check=True, capture_output=True)
                send(STEPS[shape], 20, path, c)
                subprocess.run(["callgrind_control", "-z", str(rproc.pid)], check=True, capture_output=True)
                send(STEPS[shape], args.requests, path, c)
                subprocess.run(["callgrind_control", "-d", shape, str(rproc.pid)], check=True, capture_output=True)
                time.sleep(0.5)
                c.close()
                ref[shape] = parse_callgrind(sorted(glob.glob(rout + "*"), key=os.path.getmtime)[-1])

        n = args.requests
        print(f"\n== callgrind: instructions per request ({n} requests per shape, one keep-alive connection; user space only) ==")
        header = f"{'':44}" + "".join(f"{s + ' (' + str(len(bodies[s])) + ' B)':>18}" for s in shapes)
        print(header)

        def row(label, values):
            print(f"{label:44}" + "".join(f"{v:>18}" for v in values))

        row("total", [f"{results[s][0] / n:,.0f}" for s in shapes])
        if ref:
            row("bare libmicrohttpd server, total", [f"{ref[s][0] / n:,.0f}" for s in shapes])
            row("viewportd above it", [f"{(results[s][0] - ref[s][0]) / n:,.0f}" for s in shapes])
        for label, pattern in COMPONENTS:
            regex = re.compile(pattern)
            values = []
            for s in shapes:
                total, incl, calls = results[s]
                match = [fn for fn in incl if regex.search(fn)]
                values.append(f"{max((incl[fn] for fn in match), default=0) / n:,.0f}" if match else "-")
            row(label, values)
        for label, pattern in [("calls to malloc", r"^malloc$"), ("calls to free", r"^(free|cfree)$"),
                               ("calls to swift_retain", r"^swift_retain$"), ("calls to swift_release", r"^swift_release$")]:
            regex = re.compile(pattern)
            row(label, [f"{sum(c for fn, c in results[s][2].items() if regex.search(fn)) / n:.1f}" for s in shapes])
            if ref:
                row("  bare libmicrohttpd server", [f"{sum(c for fn, c in ref[s][2].items() if regex.search(fn)) / n:.1f}" for s in shapes])
        print(f"\nraw dumps in {work} (callgrind_annotate --inclusive=yes FILE)")
        work = None
    except SystemExit:
        for log in glob.glob(os.path.join(work, "*.log")):
            sys.stderr.write(open(log).read()[-3000:])
        raise
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
        if work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
