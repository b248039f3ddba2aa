#!/usr/bin/env python3
"""Splits a `perf record -e cpu-clock -g` profile of viewportd into the request's components.

    scripts/perf-breakdown.py FILE.perf [--requests N]

Each sample goes to the first frame, from the leaf up, that belongs to a component (so malloc,
memmove or retain/release called from the plan encoder count as encoding):

    kernel    the leaf is in the kernel (loopback TCP, epoll, scheduling, futex)
    MHD       libmicrohttpd (its frames are unnamed: the library is stripped)
    http      ViewportHTTP: the access handler, RequestDriver, headers, queueing the response
    route     APIHandler's dispatch: auth, Route, the 404/405/415 checks, media type
    lookup    finding the session and its lock (SessionStore, SessionHandle, hashing the id)
    parse     JSONReader and UpdateRequest.decode
    plan      ViewportCore (ViewportSession.apply and what it calls)
    encode    PlanEncoder and JSONWriter
    metrics   ServiceMetrics, swift-metrics and swift-prometheus
    other     samples none of these claims (libc or the Swift runtime with no caller of ours)

With --requests (wrk's count during the recording) it also prints CPU microseconds per request,
taking the sample period from the recording (cpu-clock at perf's default 4000 Hz).
"""
import argparse
import collections
import re
import subprocess
import sys

COMPONENTS = [
    ("encode", re.compile(r"PlanEncoder|JSONWriter")),
    ("parse", re.compile(r"JSONReader|UpdateRequest")),
    ("plan", re.compile(r"\$s12ViewportCore|ViewportCore\.")),
    ("metrics", re.compile(r"ServiceMetrics|Prometheus|\$s7Metrics|CoreMetrics")),
    ("lookup", re.compile(r"SessionStore|SessionHandle|SessionRepository|Hasher|withSession")),
    ("route", re.compile(r"APIHandler|Route|MediaType|Problem")),
    ("http", re.compile(r"ViewportHTTP|mhdAccessHandler|mhdRequest|mhdCollectHeader")),
]


def classify(frames):
    """frames: [(symbol, dso)] from the leaf up."""
    if not frames:
        return "other"
    sym, dso = frames[0]
    if "kernel" in dso or dso.startswith("[k"):
        return "kernel"
    for sym, dso in frames:
        if "libmicrohttpd" in dso:
            return "MHD"
        for name, pattern in COMPONENTS:
            if pattern.search(sym):
                return name
    return "other"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--requests", type=int, default=0)
    parser.add_argument("--frequency", type=float, default=0, help="samples per second (default: from the file)")
    args = parser.parse_args()
    text = subprocess.run(["perf", "script", "-i", args.file, "-F", "comm,tid,period,ip,sym,dso"],
                          capture_output=True, text=True, check=True).stdout
    counts = collections.Counter()
    leaf_dso = collections.Counter()
    total = 0
    period_ns = 0
    for block in text.split("\n\n"):
        lines = [l for l in block.strip().split("\n") if l.strip()]
        if not lines:
            continue
        head = lines[0].split()
        if len(head) >= 3 and head[-1].isdigit():
            period_ns += int(head[-1])
        frames = []
        for l in lines[1:]:
            m = re.match(r"\s*[0-9a-f]+\s+(.*)\s+\(([^)]*)\)\s*$", l)
            if m:
                frames.append((m[1], m[2]))
        total += 1
        counts[classify(frames)] += 1
        if frames:
            d = frames[0][1]
            d = "kernel" if "kernel" in d else d.rsplit("/", 1)[-1]
            d = re.sub(r"^vp-.*|^viewportd.*", "viewportd", d)
            leaf_dso[d] += 1
    if total == 0:
        sys.exit("no samples")
    cpu_seconds = period_ns / 1e9 if period_ns else total / (args.frequency or 4000)
    print(f"{total} samples, {cpu_seconds:.2f} CPU s" + (f", {args.requests} requests: {cpu_seconds / args.requests * 1e6:.2f} CPU µs per request" if args.requests else ""))
    print(f"{'component':<10} {'share':>7}" + ("  µs/request" if args.requests else ""))
    order = ["kernel", "MHD", "http", "route", "lookup", "parse", "plan", "encode", "metrics", "other"]
    for name in order:
        share = counts[name] / total
        extra = f"  {share * cpu_seconds / args.requests * 1e6:10.2f}" if args.requests else ""
        print(f"{name:<10} {share * 100:6.1f}%{extra}")
    print("leaf by library: " + ", ".join(f"{d} {c / total * 100:.1f}%" for d, c in leaf_dso.most_common(8)))


if __name__ == "__main__":
    main()
